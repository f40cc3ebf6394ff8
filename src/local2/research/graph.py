"""The research graph (docs/architecture.md, "Research"), beside the chat graph and on the same
services.

```
START -> plan -> execute --(ready steps, side by side)--> run_step -> execute
                    |  a step failed for good --> replan -> execute
                    |  skipped steps freed others --> execute
                    v  nothing left to run
                 reflect --(gaps, rounds and sources left)--> plan   (the next round)
                 reflect --(no gaps / budget spent)--> compose
         compose -> verify -> publish -> critique -> END    (in parallel)
                                      -> ingest   -> END    (in parallel)
```
Each node's writes are checkpointed as it finishes (thread = run id), so a run killed
mid-way resumes from its last finished step without repeating that step's tool calls.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from local2.config import Settings
from local2.graph.context import TurnContext, contextual
from local2.graph.services import Services
from local2.research.execute import after_execute, execute, run_step
from local2.research.planner import plan, replan
from local2.research.reflect import after_reflect, reflect
from local2.research.report import compose, critique_run, ingest_run, publish, verify_report
from local2.research.state import ResearchState

AUTO: Any = "auto"


def recursion_limit(settings: Settings) -> int:
    """Super-steps for every round's plan, steps, replans and skips, plus the tail."""
    r = settings.research
    per_round = 2 * (r.max_steps + r.max_replans) * (r.max_replans + 1) + 6
    return 20 + r.max_rounds * per_round


ResearchGraph = CompiledStateGraph[ResearchState, TurnContext, ResearchState, ResearchState]


def compile_research_graph(
    services: Services, checkpointer: BaseCheckpointSaver[Any] | None = None
) -> ResearchGraph:
    """The research graph; a run passes ``TurnContext(research_services(...))``, and one
    without (a notebook, a resume after a kill) gets ``services`` (see
    :mod:`local2.graph.context`)."""
    default = TurnContext(services)

    def bind(fn: Any) -> Any:
        return contextual(fn, default)

    graph = StateGraph(ResearchState, context_schema=TurnContext)
    graph.add_node("plan", bind(plan))
    graph.add_node("execute", bind(execute))
    graph.add_node("run_step", bind(run_step))
    graph.add_node("replan", bind(replan))
    graph.add_node("reflect", bind(reflect))
    graph.add_node("compose", bind(compose))
    graph.add_node("verify", bind(verify_report))
    graph.add_node("publish", bind(publish))
    graph.add_node("critique", bind(critique_run))
    graph.add_node("ingest", bind(ingest_run))

    graph.add_edge(START, "plan")
    graph.add_edge("plan", "execute")
    graph.add_conditional_edges(
        "execute", after_execute, ["run_step", "replan", "execute", "reflect"]
    )
    graph.add_edge("run_step", "execute")
    graph.add_edge("replan", "execute")
    graph.add_conditional_edges("reflect", after_reflect, {"plan": "plan", "compose": "compose"})
    graph.add_edge("compose", "verify")
    graph.add_edge("verify", "publish")
    graph.add_edge("publish", "critique")
    graph.add_edge("publish", "ingest")
    graph.add_edge("critique", END)
    graph.add_edge("ingest", END)
    compiled = graph.compile(checkpointer=checkpointer, name="local2-research")
    return compiled.with_config(recursion_limit=recursion_limit(services.settings))


def research_services(services: Services) -> Services:
    """The chat services with only the read-only research tools: research causes no effects."""
    from local2.research.plan_schema import RESEARCH_TOOLS

    tools = {n: t for n, t in services.tools.items() if n in RESEARCH_TOOLS}
    return dataclasses.replace(services, tools=tools)
