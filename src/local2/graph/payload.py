"""The turn payload (``response.generation``): one dict that says everything about a turn.

A compare turn's payload describes the answer shown (respondent ``a`` until the person
prefers ``b``) at the top level, as every payload does, plus ``respondents`` (each one's
answer, thinking, tool calls, memory hits, grade) and ``pairwise`` (the judge's verdict, the
person's preference, which answer continues the history). Every event of it carries
``respondent_id``: ``a``, ``b``, or null for the turn's shared events (the question, the
judge's comparison). A retry's payload has ``retry`` (both attempts' grades, which is shown).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from local2 import events
from local2.contracts import Pairwise, PairwiseVerdict, ToolCall, TurnPayload
from local2.graph.state import RESPONDENT_IDS, TurnState


def _tool_call(call: Any) -> ToolCall:
    out = cast(
        ToolCall, {k: call.get(k) for k in ("tool", "args", "result", "error", "duration_s")}
    )
    for optional in ("provider", "fix"):
        if call.get(optional):
            out[optional] = call[optional]
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
        "document_hits": list(state.get("document_hits") or []),
        "model": state.get("model"),
        "backend": state.get("backend"),
        "events": [e["subject"] for e in event_log],
        "event_log": event_log,
    }
    if state.get("critique") is not None:
        payload["critique"] = state.get("critique")
    elif state.get("query_id") in (state.get("pending_grades") or {}):
        payload["critique_pending"] = True  # it gave way to the next question: graded later
    if error := state.get("error"):
        payload["error"] = str(error)
    payload.update(compare_parts(state))  # type: ignore[typeddict-item]  # compare_parts names TurnPayload's optional compare keys
    return payload


RESPONDENT_FIELDS = (
    "model",
    "backend",
    "temperature",
    "answer",
    "memory_hits",
    "critique",
    "error",
)


def _tool_calls(calls: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {k: call.get(k) for k in ("tool", "args", "result", "error", "duration_s")}
        for call in calls
    ]


def pairwise_verdict(pairwise: Pairwise | Mapping[str, Any]) -> PairwiseVerdict:
    """A compare turn's ``pairwise`` as its payload gives it (the state keeps the judge's
    verdict and the person's as text)."""
    judge = pairwise.get("judge") or {}
    labels = {rid: s.get("label") for rid, s in (pairwise.get("specs") or {}).items()}
    verdict: PairwiseVerdict = {
        "winner": cast("Literal['a', 'b', 'tie'] | None", pairwise.get("winner")),
        "scores": judge.get("scores"),
        "verdicts": judge.get("verdicts"),
        "feedback": judge.get("feedback"),
        "reason": judge.get("reason"),
        "preferred": cast("Literal['a', 'b', 'tie'] | None", pairwise.get("preferred")),
        "shown": cast("Literal['a', 'b']", pairwise.get("shown") or "a"),
        "models": labels,
    }
    return verdict


def compare_parts(state: Mapping[str, Any]) -> dict[str, Any]:
    """``respondents``/``pairwise``/``retry``/``retry_offered`` for this turn, if any."""
    parts: dict[str, Any] = {}
    query_id = state.get("query_id")
    log = list(state.get("event_log") or [])
    if any(e.get("subject") == events.RETRY_OFFERED for e in log):
        parts["retry_offered"] = True
    pairwise = state.get("pairwise") or {}
    if query_id and pairwise.get("query_id") == query_id:
        labels = {rid: s.get("label") for rid, s in (pairwise.get("specs") or {}).items()}
        records = state.get("respondents") or {}
        shown = pairwise.get("shown") or "a"
        parts["respondents"] = {
            rid: {
                "respondent_id": rid,
                "label": labels.get(rid),
                **{k: (records.get(rid) or {}).get(k) for k in RESPONDENT_FIELDS},
                "thinking": "\n\n".join((records.get(rid) or {}).get("thinking") or []),
                "tool_calls": _tool_calls((records.get(rid) or {}).get("tool_calls") or []),
                "continues_history": rid == shown,
            }
            for rid in RESPONDENT_IDS
        }
        parts["pairwise"] = pairwise_verdict(pairwise)
        parts["event_log"] = [{"respondent_id": None, **e} for e in log]
    retry = state.get("retry") or {}
    if query_id and retry.get("query_id") == query_id:
        first = retry.get("first") or {}
        parts["retry"] = {
            "of": retry.get("of"),
            "first": {k: first.get(k) for k in ("answer", "score", "feedback", "model")},
            "second": {"score": (retry.get("second") or {}).get("score")},
            "shown": retry.get("shown", 2),
        }
    return parts
