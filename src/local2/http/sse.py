"""A turn as server-sent events (``POST /query/stream``), in the order things happen.

Events (``event:`` name, ``data:`` one JSON object):
- ``thinking`` ``{text}`` and ``token`` ``{text}``: the model's thinking and answer as they
  stream (tokens streamed before a tool call were the call's markup, not the answer);
- ``tool_call`` and ``tool_result``: the ``tool.request.*`` / ``tool.result.*`` log entries;
- ``answer``: the turn payload at publish (``critique: null``, ``critique_pending``);
- ``critique``: the ``critique.result`` entry (score, feedback);
- ``event``: any other event-log entry (``query.received``, ``memory.ingested``, ...);
- ``done``: the final payload, critique included (``status: awaiting_approval`` when a tool
  call waits for the person); or ``error`` ``{error, fix}`` instead.

On a compare turn (``model_b``, :mod:`local2.graph.compare`) both respondents answer at once: every
event's data carries ``respondent_id`` (``a``, ``b``, or null for the turn's shared ones such
as the question and the judge's ``pairwise`` verdict), so ``token``/``thinking`` of the two
can be told apart, and there is one ``critique`` per respondent. ``answer`` and ``done`` hold
both answers in the payload's ``respondents``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from local2 import events
from local2.service.background import BackgroundTurn


def frame(name: str, data: Any) -> str:
    """One server-sent event."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def event_name(entry: dict[str, Any]) -> str:
    subject = str(entry.get("subject", ""))
    if subject.startswith(events.TOOL_REQUEST + "."):
        return "tool_call"
    if subject.startswith(events.TOOL_RESULT + "."):
        return "tool_result"
    if subject == events.CRITIQUE_RESULT:
        return "critique"
    if subject == events.PAIRWISE_RESULT:
        return "pairwise"
    return "event"


def answer_first(payload: dict[str, Any], critic_on: bool) -> dict[str, Any]:
    """The payload as handed over at publish: the critique is still to come."""
    answered = not payload.get("error") and payload.get("status") != "awaiting_approval"
    pending = critic_on and answered and payload.get("critique") is None
    return {**payload, "critique": payload.get("critique"), "critique_pending": pending}


def turn_events(turn: BackgroundTurn, critic_on: bool, compare: bool = False) -> Iterator[str]:
    """The turn's items as server-sent events; a model failure ends them with ``error``.
    ``compare``: two respondents answer, and every event says whose it is."""
    from local2.errors import AwaitingApproval, ModelError

    def whose(data: dict[str, Any]) -> dict[str, Any]:
        return {"respondent_id": None, **data} if compare else data

    try:
        for kind, data in turn:
            if kind in ("thinking", "token"):
                yield frame(kind, whose({"text": data}))
            elif kind == "respondent":  # one respondent's thinking or token
                yield frame(data["kind"], {"text": data["text"], "respondent_id": data["id"]})
            elif kind == "event":
                yield frame(event_name(data), whose(data))
            elif kind == "answer":
                yield frame("answer", answer_first(data, critic_on))
            elif kind == "final":
                yield frame("done", {**data, "critique_pending": False})
    except ModelError as exc:
        yield frame("error", {"error": exc.message, "fix": exc.fix})
    except AwaitingApproval as exc:  # an earlier turn of the session waits for the person
        yield frame("error", {"error": str(exc), "approval": exc.request, "fix": ""})
    except Exception as exc:  # the stream is already open: end it with a reason, not a reset
        yield frame("error", {"error": f"the turn failed ({type(exc).__name__})", "fix": ""})
