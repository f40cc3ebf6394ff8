"""The turn payload (``response.generation``): one dict that says everything about a turn.

A compare turn's payload describes the answer shown (respondent ``a`` until the person
prefers ``b``) at the top level, as every payload does, plus ``respondents`` (each one's
answer, thinking, tool calls, memory hits, grade) and ``pairwise`` (the judge's verdict, the
person's preference, which answer continues the history). Every event of it carries
``respondent_id``: ``a``, ``b``, or null for the turn's shared events (the question, the
judge's comparison). A retry's payload has ``retry`` (both attempts' grades, which is shown).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict, cast

from local2 import events
from local2.contracts import (
    EventEntry,
    Pairwise,
    PairwiseVerdict,
    Respondent,
    RespondentAnswer,
    Retry,
    RetryAttempts,
    ToolCall,
    ToolCallRecord,
    TurnPayload,
    TurnRecord,
)
from local2.graph.state import RESPONDENT_IDS, RespondentId, TurnState


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
    parts = compare_parts(state)
    if "retry_offered" in parts:
        payload["retry_offered"] = parts["retry_offered"]
    if "respondents" in parts:
        payload["respondents"] = parts["respondents"]
    if "pairwise" in parts:
        payload["pairwise"] = parts["pairwise"]
    if "event_log" in parts:
        payload["event_log"] = parts["event_log"]
    if "retry" in parts:
        payload["retry"] = parts["retry"]
    return payload


def _tool_calls(calls: Sequence[ToolCallRecord]) -> list[ToolCall]:
    """A respondent's calls as its payload shows them (no provider or fix beside them)."""
    return [
        {
            "tool": call["tool"],
            "args": call["args"],
            "result": call["result"],
            "error": call["error"],
            "duration_s": call["duration_s"],
        }
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


def turn_record(payload: TurnPayload) -> TurnRecord:
    """The payload as the turn log keeps it: its query and answer are columns already."""
    kept = {k: v for k, v in payload.items() if k not in ("query", "answer")}
    return cast(TurnRecord, kept)  # TurnRecord: TurnPayload's other fields


class CompareParts(TypedDict, total=False):
    """What a compare turn or a retry adds to its payload."""

    retry_offered: bool
    respondents: dict[str, RespondentAnswer]
    pairwise: PairwiseVerdict
    event_log: list[EventEntry]
    retry: RetryAttempts


def _respondent(
    rid: RespondentId, record: Respondent, label: str | None, shown: str
) -> RespondentAnswer:
    """One respondent's answer as the payload shows it (None for what it never got to)."""
    return {
        "respondent_id": rid,
        "label": label,
        "model": record.get("model"),
        "backend": record.get("backend"),
        "temperature": record.get("temperature"),
        "answer": record.get("answer"),
        "memory_hits": record.get("memory_hits"),
        "critique": record.get("critique"),
        "error": record.get("error"),
        "thinking": "\n\n".join(record.get("thinking") or []),
        "tool_calls": _tool_calls(record.get("tool_calls") or []),
        "continues_history": rid == shown,
    }


def compare_parts(state: TurnState | Mapping[str, Any]) -> CompareParts:
    """``respondents``/``pairwise``/``retry``/``retry_offered`` for this turn, if any."""
    parts: CompareParts = {}
    query_id = state.get("query_id")
    log: list[EventEntry] = list(state.get("event_log") or [])
    if any(e.get("subject") == events.RETRY_OFFERED for e in log):
        parts["retry_offered"] = True
    pairwise: Pairwise = state.get("pairwise") or {}
    if query_id and pairwise.get("query_id") == query_id:
        labels = {rid: s.get("label") for rid, s in (pairwise.get("specs") or {}).items()}
        records: dict[str, Respondent] = state.get("respondents") or {}
        shown = pairwise.get("shown") or "a"
        parts["respondents"] = {
            rid: _respondent(rid, records.get(rid) or {}, labels.get(rid), shown)
            for rid in RESPONDENT_IDS
        }
        parts["pairwise"] = pairwise_verdict(pairwise)
        # every event of a compare turn says whose it is: null for the turn's own
        parts["event_log"] = [{"respondent_id": None, **e} for e in log]
    retry: Retry = state.get("retry") or {}
    if query_id and retry.get("query_id") == query_id:
        first, second = retry.get("first"), retry.get("second")
        parts["retry"] = {
            "of": retry.get("of"),
            "first": {
                "answer": first.get("answer") if first else None,
                "score": first.get("score") if first else None,
                "feedback": first.get("feedback") if first else None,
                "model": first.get("model") if first else None,
            },
            "second": {"score": second.get("score") if second else None},
            "shown": retry.get("shown", 2),
        }
    return parts
