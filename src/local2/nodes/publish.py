"""``publish``: record the clean turn in history and announce the answer."""

from __future__ import annotations

from langgraph.config import get_stream_writer

from local2 import events
from local2.nodes.common import Services, event
from local2.payload import turn_payload
from local2.state import TurnState


def publish(state: TurnState, services: Services) -> dict:
    answer = state.get("answer") or ""
    generation = event(
        state,
        events.RESPONSE_GENERATION,
        session_id=state["session_id"],
        query_id=state["query_id"],
        answer_chars=len(answer),
        thinking_chars=sum(len(t) for t in state.get("thinking") or []),
        tool_calls=len(state.get("tool_calls") or []),
    )
    dialog = event(
        state,
        events.ANSWER_DIALOG,
        session_id=state["session_id"],
        query=state["query"],
        answer=answer,
    )
    record = turn_payload({**state, "event_log": [*state.get("event_log", []), generation, dialog]})
    head = services.turn_log.append(
        parent_id=state.get("history_head"),
        session_id=state["session_id"] or "",
        query_id=state["query_id"],
        user=state["query"],
        assistant=answer,
        record=record,
    )
    try:
        get_stream_writer()({"payload": record})
    except RuntimeError:
        pass
    return {
        "history_head": head,
        "turn_count": state.get("turn_count", 0) + 1,
        "event_log": [generation, dialog],
    }
