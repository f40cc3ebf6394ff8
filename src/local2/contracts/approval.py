"""Asking the person: what a paused turn asks, and the answers it accepts (docs/architecture.md,
"Trust boundaries").

The ``approve`` node pauses the graph with LangGraph's ``interrupt(request)`` when a tool call
must wait (see :mod:`local2.tools._trust`). Whoever runs the turn resumes it with
``Command(resume=answer(request, decision))``: the app from its Approve / Deny buttons, the
API from ``POST /sessions/{id}/approval``, ``local2 chat`` from a prompt on the terminal.
With no one to ask, :func:`nobody` denies, and the model is told so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

from typing_extensions import TypedDict

from local2.contracts._records import EventEntry
from local2.errors import InvalidInput

KIND: Literal["tool_approval"] = "tool_approval"
Decision = bool | Mapping[str, bool]  # every call alike, or per call id (a missing id: denied)


class Preceding(TypedDict):
    """The outside result a waiting call came after: what the person is shown beside it."""

    tool: str
    call_id: str
    args: dict[str, Any]  # that call's arguments as the model wrote them (JSON)
    preview: str


class WaitingCall(TypedDict):
    """One tool call that waits for the person, and why."""

    call_id: str
    tool: str
    args: dict[str, Any]  # the call's arguments as the model wrote them (JSON)
    reason: str
    after: Preceding | None


class ApprovalRequest(TypedDict):
    """The interrupt's value: the calls waiting, why, and the events that asked."""

    kind: Literal["tool_approval"]
    session_id: str
    query_id: str | None
    query: str | None
    calls: list[WaitingCall]
    events: list[EventEntry]
    resume: str


class PendingApproval(ApprovalRequest):
    """A request as a paused turn's checkpoint holds it, with the interrupt it answers."""

    interrupt_id: str


class ApprovalAnswer(TypedDict):
    """The resume value: each call's decision, who gave it, and the events that asked."""

    decisions: dict[str, bool]
    by: str
    asked: list[EventEntry]


Approver = Callable[[ApprovalRequest], ApprovalAnswer]
PERSON = "person"
NOBODY = "nobody"
DENIED = "denied"  # how a refused call's record starts its error


def resume_path(session_id: str) -> str:
    return f"/sessions/{session_id}/approval"


def make_request(
    state: Mapping[str, Any], calls: list[WaitingCall], asked: list[EventEntry]
) -> ApprovalRequest:
    """The interrupt's value: the calls waiting, why, and what preceded them."""
    session_id = str(state.get("session_id") or "")
    return {
        "kind": KIND,
        "session_id": session_id,
        "query_id": state.get("query_id"),
        "query": state.get("query"),
        "calls": calls,
        "events": asked,
        "resume": resume_path(session_id),
    }


def is_request(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("kind") == KIND


def answer(request: ApprovalRequest, decision: Decision, by: str = PERSON) -> ApprovalAnswer:
    """The resume value for ``request``: approve or deny all, or per call id."""
    ids = [str(c["call_id"]) for c in request.get("calls") or []]
    if isinstance(decision, bool):
        decisions = dict.fromkeys(ids, decision)
    else:
        unknown = set(decision) - set(ids)
        if unknown:
            raise InvalidInput(
                f"No call {', '.join(sorted(map(repr, unknown)))} is waiting; waiting: {ids}"
            )
        decisions = {i: decision.get(i) is True for i in ids}
    return {"decisions": decisions, "by": by, "asked": list(request.get("events") or [])}


def nobody(request: ApprovalRequest) -> ApprovalAnswer:
    """The approver when no one can be asked (``ask --json``, no terminal): deny."""
    return answer(request, False, by=NOBODY)


def read_answer(
    value: Any, call_ids: list[str]
) -> tuple[dict[str, bool], str, list[EventEntry] | None]:
    """``(decisions, by, asked events)`` from a resume value; anything unclear is a denial.

    Accepts what :func:`answer` makes, a bare bool (all calls, by the person, as a notebook
    would resume), or a plain ``{call_id: bool}`` mapping.
    """
    by, asked = PERSON, None
    if isinstance(value, bool):
        return dict.fromkeys(call_ids, value), by, asked
    if isinstance(value, Mapping) and isinstance(value.get("decisions"), Mapping):
        by = NOBODY if value.get("by") == NOBODY else PERSON
        asked = value.get("asked") if isinstance(value.get("asked"), list) else None
        value = value["decisions"]
    if isinstance(value, Mapping):
        return {i: value.get(i) is True for i in call_ids}, by, asked
    return dict.fromkeys(call_ids, False), by, asked


def denial_text(tool: str, by: str) -> str:
    """What the model reads in place of a refused call's result."""
    if by == NOBODY:
        why = f"{tool} needs the person's approval here and no one was there to give it"
    else:
        why = f"the person did not approve this {tool} call"
    return f"[tool call denied: {why}. Do not try it again; answer without it.]"


def denial_error(by: str) -> str:
    """The error recorded on a refused call (payload, event log, app)."""
    return f"{DENIED}: no one could be asked" if by == NOBODY else f"{DENIED} by the person"


def describe_call(call: WaitingCall) -> list[str]:
    """Plain-text lines for a person deciding on one call (the terminal prompt)."""
    lines = [
        f"{call['tool']} {json.dumps(call.get('args') or {}, ensure_ascii=False)}",
        f"  why it waits: {call.get('reason')}",
    ]
    after = call.get("after")
    if after:
        args = json.dumps(after.get("args") or {}, ensure_ascii=False)
        preview = " ".join(str(after.get("preview") or "").split())[:300]
        lines.append(f"  after the {after.get('tool')} result of {args}: {preview}")
    return lines


def terminal_approver(ask: Callable[[str], str], show: Callable[[str], None]) -> Approver:
    """Ask at a terminal, one call at a time; anything but yes is no."""

    def approve(request: ApprovalRequest) -> ApprovalAnswer:
        decisions: dict[str, bool] = {}
        for call in request.get("calls") or []:
            show("\nThe model wants to run a tool that needs your approval:")
            for line in describe_call(call):
                show(line)
            try:
                reply = ask(f"Allow {call['tool']}? [y/N] ")
            except (EOFError, KeyboardInterrupt):
                reply = ""
            decisions[str(call["call_id"])] = reply.strip().lower() in ("y", "yes")
        return answer(request, decisions)

    return approve
