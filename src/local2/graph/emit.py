"""What every node shares: the event emitter and the context its tool calls run with."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast

from langgraph.config import get_stream_writer

from local2.contracts import (
    LOCAL_NAME,
    EventEntry,
    Followup,
    ResearchPayload,
    TurnPayload,
)
from local2.graph.state import TurnState
from local2.tools import ToolContext


class Dialog(TypedDict):
    """The question and the whole answer, as the stream hands them out at publish."""

    session_id: str | None
    query: str
    answer: str
    respondent_id: NotRequired[str]  # a compare turn's respondent


class RespondentText(TypedDict):
    """A piece of one respondent's thinking or answer, as it streams."""

    id: str
    kind: str  # thinking | token
    text: str


class Pushed(TypedDict, total=False):
    """An item of LangGraph's custom stream: one of these (the service reads them)."""

    event: EventEntry
    dialog: Dialog
    payload: TurnPayload | ResearchPayload
    respondent: RespondentText
    followup: Followup | None


def push(item: Pushed) -> None:
    """Send an item to LangGraph's custom stream (a no-op outside a graph run)."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run (unit tests of helpers)
        return
    writer(item)


def entry(state: Mapping[str, Any], subject: str, **payload: Any) -> EventEntry:
    """An event entry timed from ``query.received``, not yet sent anywhere.

    ``state`` is the turn's state, or any mapping with ``started_at`` (epoch seconds).
    """
    started = state.get("started_at") or time.time()
    made = {"subject": subject, "t": round(time.time() - started, 3), **payload}
    if "respondent_id" in state:  # a compare turn's respondent: every event says which
        made.setdefault("respondent_id", state["respondent_id"])
    return cast(EventEntry, made)  # subject and t, with the event's own fields beside them


def event(state: Mapping[str, Any], subject: str, **payload: Any) -> EventEntry:
    """Make an event entry (see :func:`entry`) and push it to the custom stream."""
    made = entry(state, subject, **payload)
    push({"event": made})
    return made


def tool_context(state: TurnState) -> ToolContext:
    """The context this turn's tool calls run with: who asks, and the question."""
    return ToolContext(
        session_id=state["session_id"] or "",
        query_id=state["query_id"],
        query=state["query"],
        owner=state.get("owner") or LOCAL_NAME,
    )
