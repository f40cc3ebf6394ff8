"""``publish``: record the clean turn in history and announce the answer."""

from __future__ import annotations

from langgraph.runtime import Runtime

from local2 import events
from local2.graph.context import TurnContext
from local2.graph.emit import Dialog, event, push
from local2.graph.payload import turn_payload, turn_record
from local2.graph.state import TurnState, TurnUpdate

PREVIEW_CHARS = 160


def preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def publish(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    services = runtime.context.services
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
    dialog_payload: Dialog = {
        "session_id": state["session_id"],
        "query": state["query"],
        "answer": answer,
    }
    # The stream carries the whole answer; the checkpointed log keeps a preview, since the
    # answer itself is already stored once in `answer` and in the turn log.
    dialog = event(state, events.ANSWER_DIALOG, **{**dialog_payload, "answer": preview(answer)})
    push({"dialog": dialog_payload})
    payload = turn_payload(
        {**state, "event_log": [*state.get("event_log", []), generation, dialog]}
    )
    record = turn_record(payload)
    head = services.turn_log.append(
        parent_id=state.get("history_head"),
        session_id=state["session_id"] or "",
        query_id=state["query_id"],
        user=state["query"],
        assistant=answer,
        record=record,
    )
    push({"payload": payload})
    return {
        "history_head": head,
        "turn_count": state.get("turn_count", 0) + 1,
        "event_log": [generation, dialog],
    }
