"""The chat graph: the original generator's state machine as a LangGraph ``StateGraph``.

```
START -> receive -> generate --(tool calls, under the limit)--> approve -> dispatch_tool
                       ^                                                        |
                       +--------------------- await_tool <----------------------+
         generate --(final answer, or forced synthesis at the limit)--> publish
         generate --(repair a malformed tool call / empty reply)--> generate
         publish -> critique -> END        (in parallel)
         publish -> ingest   -> END        (in parallel)
         receive --(question rejected)--> END
```
``receive`` also recalls (:mod:`local2.graph.recall`, in the same step): it saves what
the person asked to be remembered and gives the model the memories most similar to the
question, as data, before it answers. ``approve`` pauses the turn (LangGraph ``interrupt``)
while a call waits for the person.

Two respondents answering the same question, and a second attempt at a low-graded answer,
are two more paths through the same graph, chosen by the run's context:
```
receive --(compare)--> compare -> respond(a) | respond(b)  (each its own answer loop)
          -> publish_pair -> critique_pair | ingest_pair -> settle_pair -> END
receive --(retry)--> retry_context -> generate ... publish -> critique -> settle_retry -> END
```
Each node takes the run's typed context (:mod:`local2.graph.context`): the services (chat
model, tools, memory, critic) and what this turn asked for. The services given to
:func:`compile_graph` are the default for a run that brings no context (a notebook, a
replay, LangGraph Server), so tests and notebooks can swap any of them;
:mod:`local2.service.wiring` builds them from settings.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from local2.config import Settings
from local2.graph import pool
from local2.graph.compare.pair import compare, critique_pair, ingest_pair, publish_pair, settle_pair
from local2.graph.compare.respond import build_respondent_graph, fan_out, respond
from local2.graph.context import TurnContext, contextual, current_context
from local2.graph.loop import add_answer_loop
from local2.graph.nodes.critique import critique
from local2.graph.nodes.generate import saves_only
from local2.graph.nodes.ingest import ingest
from local2.graph.nodes.publish import publish
from local2.graph.nodes.receive import receive
from local2.graph.nodes.retry import retry_context, settle_retry
from local2.graph.services import Services
from local2.graph.state import TurnState

TurnGraph = CompiledStateGraph[TurnState, TurnContext, TurnState, TurnState]


def answer_path(context: TurnContext | None) -> Literal["generate", "compare", "retry_context"]:
    """Who answers: one respondent, two (``compare`` in the context), or a retry."""
    if context is not None and context.compare is not None:
        return "compare"
    if context is not None and context.retry is not None:
        return "retry_context"
    return "generate"


def after_receive(state: TurnState) -> Literal["generate", "compare", "retry_context", "__end__"]:
    """A rejected question ends the turn; else one respondent answers, or two, or a retry
    (as the run's context says; a run without one: one respondent)."""
    if state.get("error"):
        return "__end__"
    if saves_only(state):  # the save answers it, compared or not ("Saved to memory: ...")
        return "generate"
    return answer_path(current_context())


def after_critique(state: TurnState) -> Literal["settle_retry", "__end__"]:
    """A retry's grade decides which attempt the session continues from."""
    retry = state.get("retry") or {}
    return "settle_retry" if retry.get("query_id") == state.get("query_id") else "__end__"


def recursion_limit(settings: Settings) -> int:
    """Enough super-steps for every allowed tool round, a repair and the tail."""
    return 13 + 4 * (settings.generator.max_tool_iterations + 3)


def compile_graph(
    services: Services,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
) -> TurnGraph:
    """The chat graph over ``services``, checkpointed by ``checkpointer``. A run passes its
    :class:`~local2.graph.context.TurnContext`; one without gets ``TurnContext(services)``."""
    pool.install()  # runs reuse one thread pool instead of starting threads each turn
    default = TurnContext(services)

    graph = StateGraph(TurnState, context_schema=TurnContext)
    graph.add_node("receive", contextual(receive, default))
    add_answer_loop(graph, default, "publish")
    graph.add_node("publish", contextual(publish, default))
    graph.add_node("critique", contextual(critique, default))
    graph.add_node("ingest", contextual(ingest, default))
    graph.add_edge(START, "receive")
    graph.add_conditional_edges(
        "receive",
        after_receive,
        {"generate": "generate", "compare": "compare", "retry_context": "retry_context", END: END},
    )
    graph.add_edge("publish", "critique")
    graph.add_edge("publish", "ingest")
    graph.add_conditional_edges(
        "critique", after_critique, {"settle_retry": "settle_retry", END: END}
    )
    graph.add_edge("ingest", END)

    # Two respondents: each runs the answer loop as a subgraph, side by side.
    graph.add_node("compare", contextual(compare, default))
    loop = build_respondent_graph(default)
    graph.add_node("respond", contextual(partial(respond, loop=loop), default))
    graph.add_node("publish_pair", contextual(publish_pair, default))
    graph.add_node("critique_pair", contextual(critique_pair, default))
    graph.add_node("ingest_pair", contextual(ingest_pair, default))
    graph.add_node("settle_pair", contextual(settle_pair, default))
    graph.add_conditional_edges("compare", fan_out, ["respond"])
    graph.add_edge("respond", "publish_pair")
    graph.add_edge("publish_pair", "critique_pair")
    graph.add_edge("publish_pair", "ingest_pair")
    graph.add_edge(["critique_pair", "ingest_pair"], "settle_pair")
    graph.add_edge("settle_pair", END)

    # A second attempt at a low-graded answer, with the critique as context.
    graph.add_node("retry_context", contextual(retry_context, default))
    graph.add_node("settle_retry", contextual(settle_retry, default))
    graph.add_edge("retry_context", "generate")
    graph.add_edge("settle_retry", END)

    compiled = graph.compile(checkpointer=checkpointer, store=store, name="local2")
    return compiled.with_config(recursion_limit=recursion_limit(services.settings))
