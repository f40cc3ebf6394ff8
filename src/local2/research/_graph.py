"""The research graph (docs/architecture.md, "Research"), beside the chat graph and on the same
services.

```
START --(a new run)--> plan --(the planner asks first)--> ask (pause) --(answered)--> plan
                         |  --(review: true)--> review (pause) --(refused)--> review
                         v                        |  approved, edited or stopped
                      execute <-------------------+
                      execute <--(stopped)-- ask     (Stop at a pause: on to the report)
START --(a follow-up)--> triage --(the ledger lacks some)--> execute
                              --(the ledger has it)--> compose
execute --(ready steps, side by side)--> run_step -> execute
        |  a step failed for good --> replan -> execute
        |  skipped steps freed others --> execute
        v  nothing left to run (or the person stopped it)
     reflect --(gaps, rounds and sources left)--> plan   (the next round)
     reflect --(no gaps / budget spent / a follow-up)--> compose
compose -> verify -> publish -> critique -> END    (in parallel)
                             -> ingest   -> END    (in parallel)
                     publish --(a follow-up, or no sources: no report)--> END
```
Each node's writes are checkpointed as it finishes (thread = run id), so a run killed
mid-way resumes from its last finished step without repeating that step's tool calls, and a
pause (LangGraph ``interrupt``) survives a restart. What the person says while the run goes
reaches ``execute`` through the run's inbox (:mod:`local2.research._planner`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from local2.config import Settings
from local2.graph import Services, TurnContext, contextual
from local2.research._execute import after_execute, execute, run_step
from local2.research._planner import after_ask, after_plan, after_review, ask, plan, replan, review
from local2.research._report import (
    after_publish,
    after_reflect,
    after_triage,
    compose,
    critique_run,
    ingest_run,
    publish,
    reflect,
    route_start,
    triage,
    verify_report,
)
from local2.research._state import ResearchContext, ResearchState, ResearchUpdate, step_catalog

if TYPE_CHECKING:
    from local2.storage import SteerInbox

AUTO: Any = "auto"


def recursion_limit(settings: Settings) -> int:
    """Super-steps for every round's plan, steps, replans and skips, plus the tail."""
    r = settings.research
    per_round = 2 * (r.max_steps + r.max_replans) * (r.max_replans + 1) + 6
    return 40 + r.max_rounds * per_round  # and the pauses, the says' added steps


# The graph's nodes, in the order they are added (each bound to the run's context): each
# returns a ResearchUpdate, as the chat graph's nodes return a TurnUpdate.
NODES: dict[str, Callable[..., ResearchUpdate]] = {
    "plan": plan,
    "ask": ask,
    "review": review,
    "triage": triage,
    "execute": execute,
    "run_step": run_step,
    "replan": replan,
    "reflect": reflect,
    "compose": compose,
    "verify": verify_report,
    "publish": publish,
    "critique": critique_run,
    "ingest": ingest_run,
}

ResearchGraph = CompiledStateGraph[ResearchState, TurnContext, ResearchState, ResearchState]


def compile_research_graph(
    services: Services,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    inbox: SteerInbox | None = None,
    *,
    identify: Any = None,
) -> ResearchGraph:
    """The research graph; a run passes ``ResearchContext(research_services(...), inbox)``,
    and one without (a notebook, a resume after a kill, LangGraph Server) gets ``services``
    and ``inbox`` (see :mod:`local2.graph._turn`). ``identify``: a first step that says
    whose run it is (LangGraph Server's, from its auth: the graph then takes no context
    schema, as the Server passes its own dict)."""
    default = ResearchContext(services, inbox=inbox)

    def bind(fn: Any) -> Any:
        return contextual(fn, default)

    schema = None if identify is not None else TurnContext
    graph = StateGraph(ResearchState, context_schema=schema)
    for name, node in NODES.items():
        graph.add_node(name, bind(node))
    add_edges(graph, identify)
    compiled = graph.compile(checkpointer=checkpointer, name="local2-research")
    return compiled.with_config(recursion_limit=recursion_limit(services.settings))


def add_edges(graph: StateGraph[ResearchState, TurnContext], identify: Any) -> None:
    """How a run goes from node to node (from ``identify`` first, when there is one)."""
    starts: dict[Hashable, str] = {"plan": "plan", "triage": "triage"}
    if identify is not None:
        graph.add_node("identify", identify)
        graph.add_edge(START, "identify")
        graph.add_conditional_edges("identify", route_start, starts)
    else:
        graph.add_conditional_edges(START, route_start, starts)
    graph.add_conditional_edges(
        "plan", after_plan, {"ask": "ask", "review": "review", "execute": "execute"}
    )
    graph.add_conditional_edges("ask", after_ask, {"plan": "plan", "execute": "execute"})
    graph.add_conditional_edges("review", after_review, {"review": "review", "execute": "execute"})
    graph.add_conditional_edges(
        "triage", after_triage, {"execute": "execute", "compose": "compose"}
    )
    graph.add_conditional_edges(
        "execute", after_execute, ["run_step", "replan", "execute", "reflect"]
    )
    graph.add_edge("run_step", "execute")
    graph.add_edge("replan", "execute")
    graph.add_conditional_edges("reflect", after_reflect, {"plan": "plan", "compose": "compose"})
    graph.add_edge("compose", "verify")
    graph.add_edge("verify", "publish")
    graph.add_conditional_edges("publish", after_publish, ["critique", "ingest", END])
    graph.add_edge("critique", END)
    graph.add_edge("ingest", END)


def research_services(services: Services) -> Services:
    """The chat services with only the tools a step may call, those that only read
    (:mod:`local2.research._state`): research causes no effects."""

    tools = {n: services.tools[n] for n in step_catalog(services).names()}
    return dataclasses.replace(services, tools=tools)
