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
``receive`` also recalls (:mod:`local2.graph._turn`, in the same step): it saves what
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
Each node takes the run's typed context (:mod:`local2.graph._turn`): the services (chat
model, tools, memory, critic) and what this turn asked for. The services given to
:func:`compile_graph` are the default for a run that brings no context (a notebook, a
replay, LangGraph Server), so tests and notebooks can swap any of them;
:mod:`local2.service.wiring` builds them from settings.

Here with it: the one thread pool every run shares (:func:`install`), and the grade given
after the session's next question, from the turn's own checkpoint (:func:`judge_late`,
:func:`keep_late`, :func:`landing`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from langchain_core.runnables.config import ContextThreadPoolExecutor, get_executor_for_config
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from local2 import events
from local2.config import Settings
from local2.contracts import Critique, PendingGrade, Verdict
from local2.graph._after import (
    critique,
    ingest,
    judge_turn,
    publish,
    record_grade,
    retry_context,
    settle,
    settle_retry,
)
from local2.graph._answer import add_answer_loop, saves_only
from local2.graph._compare import (
    build_respondent_graph,
    compare,
    critique_pair,
    fan_out,
    ingest_pair,
    judge_respondents,
    mark_and_vote,
    pair_graded,
    publish_pair,
    respond,
    settle_pair,
)
from local2.graph._turn import (
    Services,
    TurnContext,
    TurnState,
    TurnUpdate,
    contextual,
    current_context,
    receive,
)
from local2.models import Cancellation

# --- pool -------------------------------------------------------------------------------
# One long-lived thread pool for LangGraph's background work in this process.
#
# LangGraph's sync loop asks langchain-core for a thread pool per graph run
# (``get_executor_for_config``), in which it writes checkpoints and runs parallel nodes. A new
# pool starts new threads: a chat turn started 4-6 of them, and each start is waited for by the
# step that submits work, on the path to the answer (``bench/overhead.py``). :func:`install`
# hands LangGraph one pool that lives as long as the process, so a turn reuses idle threads.
#
# LangGraph waits for its own tasks when a run ends (it never relies on the pool shutting
# down), so sharing the pool changes nothing else. A run whose config sets
# ``max_concurrency`` keeps a bounded pool of its own, as before. The pool's size bound is only
# a ceiling: threads start when no idle one is free, so it is generous, because runs can wait
# on each other's tasks (a compare turn's respondents are subgraphs run as tasks).

log = logging.getLogger(__name__)

MAX_THREADS = 128  # a ceiling for every run at once; threads start only when none is idle

_pool: ContextThreadPoolExecutor | None = None
_guard = threading.Lock()


def shared_pool() -> ContextThreadPoolExecutor:
    """The process's pool (made on first use)."""
    global _pool
    with _guard:
        if _pool is None:
            _pool = ContextThreadPoolExecutor(
                max_workers=MAX_THREADS, thread_name_prefix="local2-graph"
            )
        return _pool


@contextmanager
def executor_for_config(config: Any) -> Iterator[Executor]:
    """langchain-core's ``get_executor_for_config``, with the shared pool unless the run
    bounds its own concurrency. The shared pool is not shut down when the run ends."""
    if (config or {}).get("max_concurrency") is not None:
        with get_executor_for_config(config) as bounded:
            yield bounded
        return
    yield shared_pool()


def install() -> bool:
    """Have LangGraph's runs use :func:`executor_for_config`; False if LangGraph no longer
    has the hook (then each run makes its own pool, as LangGraph does by default)."""
    try:
        # not at the top: LangGraph's private module, tried (a release without it is no failure)
        from langgraph.pregel import _executor
    except ImportError:
        return False
    current = getattr(_executor, "get_executor_for_config", None)
    if current is executor_for_config:
        return True
    if current is not get_executor_for_config:
        log.debug("LangGraph's executor hook has changed; runs keep their own pools")
        return False
    # LangGraph's private hook: its module imports the name without re-exporting it
    _executor.get_executor_for_config = executor_for_config  # type: ignore[attr-defined]
    return True


# --- late_grades ------------------------------------------------------------------------
# A grade given after the session's next question, from the turn's own checkpoint.
#
# A critique that gave way to the person's next question left its grade owed
# (:mod:`local2.graph._after`). Later, once the session is quiet,
# :mod:`local2.service.chat._late_grades` grades the turn from that checkpoint (:func:`judge_late`:
# the same judge, the same evidence) and gives the grade (:func:`keep_late`, then
# :func:`landing`): the same records an in-run grade keeps (the turn log's note, the engram's
# score; for a pair both grades, the verdict, the engrams' marks and the judge's arena vote)
# and, on the session's head, one new checkpoint that clears the owed entry and logs
# ``critique.result`` with ``late: true``. When the head is still that turn, the grade also goes
# where an in-run grade goes (``critique``, the respondents' grades, the verdict, a retry's
# settling). The turn's own checkpoints are never rewritten, so the history is not forked, and
# time travel shows each checkpoint as it was when it was written.


@dataclass(frozen=True)
class LateGrade:
    """What the judge said about one owed turn: the shown answer's critique, and for a pair
    both critiques and the verdict."""

    critique: Critique
    critiques: dict[str, Critique] = field(default_factory=dict)
    verdict: Verdict | None = None


def judge_late(
    values: Mapping[str, Any],
    services: Services,
    owed: PendingGrade,
    cancel: Cancellation | None = None,
) -> LateGrade:
    """Grade the turn of ``values`` (its checkpoint's state) as its critique would have;
    :class:`~local2.errors.GaveWay` when ``cancel`` is set first."""
    if not owed.get("pair"):
        return LateGrade(judge_turn(values, services, cancel))
    critiques, verdict = judge_respondents(values, services, cancel)
    shown = (values.get("pairwise") or {}).get("shown") or "a"
    return LateGrade(critiques[shown], critiques, verdict)


def keep_late(
    values: Mapping[str, Any], services: Services, owed: PendingGrade, grade: LateGrade
) -> TurnUpdate:
    """Keep the grade where an in-run one is kept (the turn log's note, the engram's score;
    a pair's marks and the judge's vote too); returns the grade's update for the state."""
    if not owed.get("pair") or grade.verdict is None:
        return record_grade(values, services, grade.critique, late=True)
    update = pair_graded(values, services, grade.critiques, grade.verdict, late=True)
    respondents = {
        rid: {**record, **(update.get("respondents") or {}).get(rid, {})}  # type: ignore[union-attr]  # a pair's update names both respondents
        for rid, record in (values.get("respondents") or {}).items()
    }
    mark_and_vote(
        {**values, "pairwise": update.get("pairwise"), "respondents": respondents}, services
    )
    return update


def landing(head: Mapping[str, Any], query_id: str, given: TurnUpdate) -> TurnUpdate:
    """The update of the session's head once the grade of ``query_id`` is ``given``: the
    pending entry cleared and the grade's events logged; where an in-run grade goes too when
    the head is still that turn (the answer still offered: a retry after a low grade)."""
    log = [e for e in given.get("event_log") or [] if isinstance(e, dict)]
    update: TurnUpdate = {"pending_grades": {query_id: None}}
    if head.get("query_id") != query_id:  # the session moved on: only the record of it
        update["event_log"] = [e for e in log if e.get("subject") != events.RETRY_OFFERED]
        return update
    update.update(given)
    update["pending_grades"] = {query_id: None}
    retry = head.get("retry") or {}
    if retry.get("query_id") == query_id:  # a second attempt: the better one continues
        settled = settle({**head, "critique": given.get("critique"), "pending_grades": {}})
        log += [e for e in settled.get("event_log") or [] if isinstance(e, dict)]
        update.update({k: v for k, v in settled.items() if k != "event_log"})  # type: ignore[typeddict-item]  # settle's own keys of TurnUpdate
    update["event_log"] = log
    return update


# --- topology ---------------------------------------------------------------------------
# The chat graph: the original generator's state machine as a LangGraph ``StateGraph``.
#
# ```
# START -> receive -> generate --(tool calls, under the limit)--> approve -> dispatch_tool
#                        ^                                                        |
#                        +--------------------- await_tool <----------------------+
#          generate --(final answer, or forced synthesis at the limit)--> publish
#          generate --(repair a malformed tool call / empty reply)--> generate
#          publish -> critique -> END        (in parallel)
#          publish -> ingest   -> END        (in parallel)
#          receive --(question rejected)--> END
# ```
# ``receive`` also recalls (:mod:`local2.graph._turn`, in the same step): it saves what
# the person asked to be remembered and gives the model the memories most similar to the
# question, as data, before it answers. ``approve`` pauses the turn (LangGraph ``interrupt``)
# while a call waits for the person.
#
# Two respondents answering the same question, and a second attempt at a low-graded answer,
# are two more paths through the same graph, chosen by the run's context:
# ```
# receive --(compare)--> compare -> respond(a) | respond(b)  (each its own answer loop)
#           -> publish_pair -> critique_pair | ingest_pair -> settle_pair -> END
# receive --(retry)--> retry_context -> generate ... publish -> critique -> settle_retry -> END
# ```
# Each node takes the run's typed context (:mod:`local2.graph._turn`): the services (chat
# model, tools, memory, critic) and what this turn asked for. The services given to
# :func:`compile_graph` are the default for a run that brings no context (a notebook, a
# replay, LangGraph Server), so tests and notebooks can swap any of them;
# :mod:`local2.service.wiring` builds them from settings.

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
    :class:`~local2.graph._turn.TurnContext`; one without gets ``TurnContext(services)``."""
    install()  # runs reuse one thread pool instead of starting threads each turn
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
