"""The turn payload (``response.generation``): one dict that says everything about a turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from local2.contracts.turn import TurnPayload
from local2.graph.state import TurnState


def _tool_call(call: Any) -> dict[str, Any]:
    out = {k: call.get(k) for k in ("tool", "args", "result", "error", "duration_s")}
    if call.get("provider"):
        out["provider"] = call["provider"]
    return out


def turn_payload(state: TurnState | Mapping[str, Any]) -> TurnPayload:
    event_log = list(state.get("event_log") or [])
    payload: TurnPayload = {
        "session_id": state.get("session_id"),
        "query_id": state.get("query_id"),
        "query": state.get("query"),
        "answer": state.get("answer") or "",
        "thinking": "\n\n".join(t for t in state.get("thinking") or [] if t),
        "tool_calls": [_tool_call(call) for call in state.get("tool_calls") or []],
        "memory_hits": list(state.get("memory_hits") or []),
        "memory_saved": list(state.get("memory_saved") or []),
        "model": state.get("model"),
        "backend": state.get("backend"),
        "events": [e["subject"] for e in event_log],
        "event_log": event_log,
    }
    if state.get("critique") is not None:
        payload["critique"] = state.get("critique")
    if state.get("error"):
        payload["error"] = state.get("error")
    from local2.graph.compare.payload import compare_parts  # two respondents, or a retry

    payload.update(compare_parts(state))  # type: ignore[typeddict-item]
    return payload
