"""What a run needs besides its state: one typed context (LangGraph ``context_schema``).

A node takes ``runtime: Runtime[TurnContext]`` (LangGraph injects it by that name) and reads
``runtime.context``: the services it calls, and what this one turn asked for, a second
respondent (``compare``), a second attempt (``retry``), the memory recall started before
the graph (``recall_ahead``), and ``give_way``: set when the person asks the session's next
question while this turn's critic or memory still work after its answer (they give way:
docs/architecture.md, "A turn's path"; None: they never do). The service passes it on every run:
``graph.stream(input, config, context=TurnContext(...))``.

LangGraph does not checkpoint a context, and a run may bring none: a notebook's
``graph.invoke(input, {"configurable": {"thread_id": ...}})``, a replay
``invoke(None, past_config)``, a resume ``Command(resume=...)``, or LangGraph Server (which
passes its own dict of configurable values). Each node is therefore added through
:func:`contextual`, which gives it the graph's *default* context when the run's is not a
``TurnContext``: the services the graph was compiled with, and nothing else asked for (one
respondent, no retry, recall in the node). That is what such a run always meant; a compare
turn resumed after an approval still knows both respondents, as they are in its state.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime, get_runtime

from local2.contracts import CompareSpec, FirstAttempt
from local2.graph.services import Services
from local2.models import Cancellation

if TYPE_CHECKING:
    from local2.graph.recall import RecallAhead

U = TypeVar("U")


@dataclass(frozen=True, slots=True)
class TurnContext:
    """One run's context: its services and what this turn asked for."""

    services: Services
    compare: CompareSpec | None = None  # a second respondent answers too
    retry: FirstAttempt | None = None  # a second attempt at this first one
    recall_ahead: RecallAhead | None = None  # memory searched while the graph started
    give_way: Cancellation | None = None  # set: the next question came; the critic yields
    memory_written: Callable[[], None] | None = None  # called once ingest has stored the turn


def current_context() -> TurnContext | None:
    """The context of the run a router is part of, or None. A router asks here rather than
    taking ``runtime``: ``update_state`` (a replay's restarted clock, a vote) runs the
    routers after the node it writes as, with no runtime to inject."""
    try:
        runtime = get_runtime(TurnContext)
    except RuntimeError:  # called outside a run
        return None
    context = getattr(runtime, "context", None)
    return context if isinstance(context, TurnContext) else None


def contextual(node: Callable[..., U], default: TurnContext) -> Callable[..., U]:
    """``node`` (``(state, runtime[, config]) -> update``) as the graph adds it: run with the
    graph's ``default`` context when its run brings none of ours (see above)."""
    wants_config = "config" in inspect.signature(node).parameters

    def run(state: Any, runtime: Runtime[TurnContext], config: RunnableConfig) -> U:
        if not isinstance(runtime.context, TurnContext):
            runtime = runtime.override(context=default)
        if wants_config:
            return node(state, runtime, config)
        return node(state, runtime)

    run.__name__ = getattr(node, "__name__", "node")
    run.__doc__ = node.__doc__
    return run
