"""``await_tool``: collect each tool's result, timeout or error, in the order they finish.

Every result reaches the model wrapped as untrusted data; failures become the bracketed
strings the model is told to expect (``[tool timeout after Ns]``, ``[tool error: ...]``,
``[unknown tool: 'x']``) and generation resumes. A failed call reaches the model with a
plain note of our own before it (:func:`failure_note`: say it failed, do not guess), and its
record keeps the fix the tool gave (``ToolError.fix``) for the person; the client's own text
(``ToolError.data["detail"]``) goes to the ``tool.result`` event only. A call that times
out is stopped, not abandoned: it is cancelled and waited for (``ToolRunner.stop``); its
``tool.result`` event says whether it ended (``stopped``).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.runtime import Runtime

from local2 import events
from local2.contracts import (
    EventEntry,
    MemoryHit,
    PendingCall,
    ToolCallRecord,
    denial_error,
    denial_text,
)
from local2.errors import ToolError
from local2.graph.answer_guard import wrap_untrusted
from local2.graph.context import TurnContext
from local2.graph.emit import event, tool_context
from local2.graph.services import Services
from local2.graph.state import TurnState, TurnUpdate
from local2.tools import Started, ToolContext, ToolResult

log_ = logging.getLogger(__name__)


Emitted = list[tuple[str, dict[str, object]]]  # (subject, fields) of the events a tool emits


def _outcome(
    started: Started,
    # data: the tool's own account of its result (ToolResult.data), a failure's fix in it
) -> tuple[ToolResult | None, str | None, Emitted, dict[str, Any]]:
    """``(result, error, events, data)`` of a finished call (a failure's fix in ``data``)."""
    try:
        result = started.future.result(timeout=0)
        return result, None, list(result.events), result.data
    except ToolError as exc:
        return None, str(exc), list(exc.events), {**exc.data, "fix": exc.fix}
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}", [], {}


def failure_note(tool: str) -> str:
    """Put before a failed call's result: plainly, what the model must do instead of guessing
    (our own words, outside the untrusted envelope the error text stays in)."""
    return (
        f"The {tool} call failed (the error is below), so you have no result from it. Say "
        "so plainly in your answer and do not guess: give no figures, dates, prices, "
        "versions or current facts that the call would have looked up."
    )


def _shown(record: ToolCallRecord, refused: bool) -> str:
    """A call's result as the model reads it."""
    if refused:  # a refusal is our own word to the model, not tool output
        return record["result"]
    wrapped = wrap_untrusted(record["tool"], record["result"])
    return f"{failure_note(record['tool'])}\n{wrapped}" if record["error"] else wrapped


Call = PendingCall


@dataclass
class _Round:
    """One round's finished calls, the events they emitted and the memories they found."""

    state: TurnState
    records: dict[str, ToolCallRecord] = field(default_factory=dict)
    log: list[EventEntry] = field(default_factory=list)
    hits: list[MemoryHit] = field(default_factory=list)

    def finish(
        self,
        call: Call,
        result: str,
        error: str | None,
        duration: float,
        provider: str | None = None,
        fix: str | None = None,
        **extra: object,
    ) -> None:
        record: ToolCallRecord = {
            "id": call["id"],
            "tool": call["name"],
            "args": call["args"],
            "result": result,
            "error": error,
            "duration_s": round(duration, 3),
        }
        if provider:  # the service that answered (e.g. which search provider)
            record["provider"] = provider
        if fix:
            record["fix"] = fix
        self.records[call["id"]] = record
        self.log.append(
            event(
                self.state,
                events.tool_result(call["name"]),
                tool=call["name"],
                call_id=call["id"],
                duration_s=round(duration, 3),
                error=error,
                chars=len(result),
                **extra,
            )
        )

    def done(self, call: Call, started: Started, now: float) -> None:
        """A call whose future has finished: its result, or its error as the model reads it."""
        result, error, emitted, data = _outcome(started)
        duration = now - started.started_at
        self.log.extend(event(self.state, subject, **payload) for subject, payload in emitted)
        if result is not None:
            self.finish(call, result.text, None, duration, data.get("provider"))
            self.hits.extend(data.get("memory_hits", []))
        else:
            text = f"[tool error: {error}]"
            # the client's own account stays in the event log, never in what is shown
            raw = {k: data[k] for k in ("cause", "detail") if data.get(k)}
            self.finish(call, text, error, duration, data.get("provider"), data.get("fix"), **raw)

    def timed_out(self, call: Call, timeout: float, stopped: bool) -> None:
        if not stopped:
            log_.warning("tool %s did not stop after its timeout", call["name"])
        shown = f"{timeout:g}"
        note = f"tool timeout after {shown}s"
        self.finish(call, f"[{note}]", note, timeout, stopped=stopped)


Running = dict[str, tuple[Call, Started, float]]  # call id -> call, its run, its timeout


def _start(calls: list[Call], services: Services, ctx: ToolContext, done: _Round) -> Running:
    """Start every call (one the approval step started already is taken over); a denied or
    unknown call is finished at once."""
    default_timeout = services.settings.generator.tool_timeout_s
    running: Running = {}
    for call in calls:
        tool = services.tools.get(call["name"])
        if call.get("denied"):
            by = call["denied"]
            done.finish(call, denial_text(call["name"], by), denial_error(by), 0.0)
            continue
        if tool is None:
            unknown = f"unknown tool: {call['name']!r}"
            done.finish(call, f"[{unknown}]", unknown, 0.0)
            continue
        started = services.runner.take(ctx.query_id, call["id"]) or services.runner.start(
            tool, call["args"], ctx, call["id"]
        )
        running[call["id"]] = (call, started, tool.timeout_s or default_timeout)
    return running


def _wait_all(running: Running, services: Services, done: _Round) -> None:
    """Wait for the calls side by side; one past its timeout is stopped and says so."""
    while running:
        now = time.time()
        next_deadline = min(s.started_at + t for _, s, t in running.values())
        wait(
            [s.future for _, s, _ in running.values()],
            timeout=max(0.0, next_deadline - now),
            return_when=FIRST_COMPLETED,
        )
        now = time.time()
        late = [
            call_id
            for call_id, (_, started, timeout) in running.items()
            if not started.future.done() and now >= started.started_at + timeout
        ]
        stopped = (
            dict(zip(late, services.runner.stop([running[c][1] for c in late]), strict=True))
            if late
            else {}
        )
        for call_id, (call, started, timeout) in list(running.items()):
            if call_id in stopped:
                done.timed_out(call, timeout, stopped[call_id])
            elif started.future.done():
                done.done(call, started, now)
            else:
                continue
            del running[call_id]


def _new_hits(state: TurnState, hits: list[MemoryHit]) -> list[MemoryHit]:
    """A memory the turn already holds (recalled before answering, or by an earlier call) is
    one hit, not two: the payload and the app list each memory once."""
    seen = {h["id"] for h in state.get("memory_hits") or []}
    unique: list[MemoryHit] = []
    for hit in hits:
        if hit["id"] not in seen:
            seen.add(hit["id"])
            unique.append(hit)
    return unique


def await_tool(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    services = runtime.context.services
    calls = state.get("pending_tool_calls", [])
    done = _Round(state)
    _wait_all(_start(calls, services, tool_context(state), done), services, done)
    ordered = [done.records[c["id"]] for c in calls]
    refused = {c["id"] for c in calls if c.get("denied")}
    messages = [
        ToolMessage(_shown(r, r["id"] in refused), tool_call_id=r["id"], name=r["tool"])
        for r in ordered
    ]
    return {
        "messages": messages,
        "tool_calls": ordered,
        "memory_hits": _new_hits(state, done.hits),
        "tool_rounds": state.get("tool_rounds", 0) + 1,
        "pending_tool_calls": [],
        "event_log": done.log,
    }
