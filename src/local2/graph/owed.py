"""A grade owed: the critic gave way to the person's next question.

When the person asks the session's next question while the critic still grades the last
answer (``critique``/``critique_pair`` with the run's ``give_way`` set), the critic gives way:
its request is cancelled, and the node only records that the grade is owed (:func:`defer`): a
``pending_grades`` entry in the session's state (the checkpoint its critique started from,
the turn it grades) and ``critique.deferred``. The turn then ends at once; ``settle_pair``
counts no judge vote yet (and names its own checkpoint as the one to grade from: the engrams
are stored by then) and ``settle_retry`` keeps the attempt the person saw. The grade is given
later (:mod:`local2.graph.late_grades`).
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from local2 import events
from local2.contracts import PendingGrade
from local2.graph.emit import event
from local2.graph.state import TurnState, TurnUpdate

ROOT = ""  # the chat graph's own checkpoint namespace (not a subgraph's)


def started_from(config: RunnableConfig) -> str | None:
    """The checkpoint a node's task runs from (LangGraph names it in the task's config)."""
    return ((config.get("configurable") or {}).get("checkpoint_map") or {}).get(ROOT)


def defer(state: TurnState, config: RunnableConfig, *, pair: bool) -> TurnUpdate:
    """The update of a critique that gave way: the grade is owed, from this checkpoint (a
    pair's, from the one ``settle_pair`` runs from: its engrams are stored by then)."""
    query_id = state["query_id"]
    started = started_from(config)
    records = state.get("respondents") or {}
    shown = (state.get("pairwise") or {}).get("shown") or "a"
    turn_id = (records.get(shown) or {}).get("turn_id") if pair else state.get("history_head")
    owed: PendingGrade = {"checkpoint_id": started, "turn_id": turn_id, "pair": pair}
    deferred = event(
        state,
        events.CRITIQUE_DEFERRED,
        query_id=query_id,
        session_id=state.get("session_id"),
        **({"respondent_id": None} if pair else {}),
    )
    return {"pending_grades": {query_id: owed}, "event_log": [deferred]}
