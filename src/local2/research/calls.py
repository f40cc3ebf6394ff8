"""A step's tool calls: each within its timeout, retried once after a transient failure, and
a read step's calls side by side within its budget of seconds.

A read step reads several pages (``research.fetch_count`` a round); they are fetched at once
(``research.fetch_workers``, each through the tool, so ``web_fetch``'s caps and the
untrusted-page rules hold), and all within ``research.fetch_seconds``: a fetch still running
when that time is up is stopped and recorded as skipped, and one not yet started is skipped
without being called, so the run goes on with what was read instead of waiting.
"""

from __future__ import annotations

import contextvars
import re
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypedDict, cast

from local2 import events
from local2.contracts import EventEntry, SourceMeta
from local2.errors import ToolError
from local2.graph import Services, event
from local2.research._state import CallRecord, Found, StepTool
from local2.research.readings import found_in
from local2.tools import LIBRARY_EMPTY, TIMEOUT, ToolContext, ToolResult, cause_of, lasting_of

_TRANSIENT = re.compile(r"timeout|timed out|\b(?:failed|status):? (?:429|5\d\d)\b", re.I)
NO_TEXT = "(no readable text found on this page)"
SKIPPED = "skipped: the read budget"  # how a call the budget of seconds cut off begins


class Reason(TypedDict, total=False):
    """A failed call's cause and fix, when its tool named them, and whether no other query
    of that tool can succeed (tools/search_failures.py, ``LASTING``)."""

    cause: str
    fix: str
    lasting: bool


Planned = tuple[str, dict[str, Any], str]  # (tool, args as the plan wrote them (JSON), title)


def is_transient(error: str) -> bool:
    """Worth one retry: a timeout, a rate limit or a server error."""
    return bool(_TRANSIENT.search(error))


def call_tool(
    services: Services,
    name: str,
    args: dict[str, Any],  # as the plan wrote them (JSON), with its target filled in
    ctx: ToolContext,
    call_id: str,
    deadline: float | None = None,
) -> tuple[ToolResult | None, str | None, float, Reason]:
    """One tool call within its timeout (and before ``deadline``): ``(result, error, s,
    reason)``, ``reason`` the cause and fix a failed search names (``ToolError.data``)."""
    tool = services.tools.get(name)
    if tool is None:
        return None, f"unknown tool: {name!r}", 0.0, {}
    timeout = tool.timeout_s or services.settings.generator.tool_timeout_s
    budget = None if deadline is None else deadline - time.time()
    cut = budget is not None and budget < timeout
    wait_s = max(0.0, budget) if budget is not None and cut else timeout
    started = services.runner.start(tool, args, ctx, call_id)
    reason: Reason = {}
    try:
        result = started.future.result(timeout=wait_s)
        error = None
    except FutureTimeout:
        services.runner.stop([started])  # cancelled and waited for, not abandoned
        result = None
        error = _skipped(services) if cut else f"tool timeout after {timeout:g}s"
        reason = {} if cut else {"cause": TIMEOUT}
    except ToolError as exc:
        result, error, reason = None, str(exc), reason_of(exc)
    except Exception as exc:
        result, error = None, f"{type(exc).__name__}: {exc}"
    finally:
        services.runner.take(ctx.query_id, call_id)
    return result, error, time.time() - started.started_at, reason


def reason_of(exc: ToolError) -> Reason:
    """The cause a failed search names (no network, refused, a rejected key...) and its fix,
    for a run that must say what to do when nothing was found (research/no_sources.py)."""
    reason: Reason = {}
    if cause := cause_of(exc):
        reason["cause"] = cause
    if exc.fix:
        reason["fix"] = exc.fix
    if lasting_of(exc):
        reason["lasting"] = True
    return reason


def _skipped(services: Services) -> str:
    return f"{SKIPPED} of {services.settings.research.fetch_seconds:g}s was spent"


def _soft_failure(tool: StepTool | None, found: list[Found], result: ToolResult) -> str | None:
    """A call that answered but gave nothing to use."""
    text = result.text.strip()
    if text.startswith(LIBRARY_EMPTY):  # says so itself ("no results: ..." would add nothing)
        return text[:160]
    if tool is not None and tool.finder and not found:
        return f"no results: {text[:160]}"
    if text.endswith(NO_TEXT) or not text:
        return "no readable text" + (" on the page" if text else "")
    return None


def kept_copy(found: list[Found], result: ToolResult) -> None:
    """What a read from the library read: its kept copy's id, on each page it read."""
    kept = result.data.get("library") if isinstance(result.data, dict) else None
    if isinstance(kept, str) and kept:
        for item in found:
            if item["kind"] == "page":
                item["kept"] = kept


def records(found: list[Found], result: ToolResult) -> None:
    """What a search of the run's sources knew of each hit: its record, by the URL listed."""
    known = result.data.get("records") if isinstance(result.data, dict) else None
    if not isinstance(known, dict):
        return
    for item in found:
        meta = known.get(item["url"])
        if isinstance(meta, dict):
            item["meta"] = cast(SourceMeta, meta)


def notices_of(result: ToolResult | None) -> list[str]:
    """What a search of several sources said (a source left out, one that failed)."""
    said = (
        result.data.get("notices") if result is not None and isinstance(result.data, dict) else None
    )
    return [str(n) for n in said] if isinstance(said, list) else []


def call_with_retry(
    services: Services,
    spec: StepTool | None,
    planned: Planned,
    ctx: ToolContext,
    ids: tuple[str, str],
    timing: Mapping[str, float | None],  # the run's started_at, that events are timed from
    deadline: float | None = None,
) -> tuple[list[Found], CallRecord, list[EventEntry]]:
    """One planned call, tried again once after a transient failure (timeout, 429, 5xx) while
    ``deadline`` allows: the sources it found or read, its record and its events."""
    tool, args, title = planned
    step_id, call_id = ids
    backoff = services.settings.research.retry_backoff_s
    log: list[EventEntry] = []
    error: str | None = None
    result: ToolResult | None = None
    reason: Reason = {}
    found: list[Found] = []
    attempts = 0
    duration = 0.0
    while attempts < 2:
        if deadline is not None and time.time() >= deadline:
            error = error or _skipped(services)  # never started, or no time for its retry
            break
        attempts += 1
        log.append(event(timing, events.tool_request(tool), tool=tool, args=args, call_id=call_id))
        result, error, duration, reason = call_tool(services, tool, args, ctx, call_id, deadline)
        found = []
        if result is not None:
            found = found_in(spec, args, result.text, step_id, title) if spec is not None else []
            kept_copy(found, result)
            records(found, result)
            error = _soft_failure(spec, found, result)
        log.append(
            event(
                timing,
                events.tool_result(tool),
                tool=tool,
                call_id=call_id,
                duration_s=round(duration, 3),
                error=error,
                chars=len(result.text) if result is not None else 0,
                attempt=attempts,
                **({"notices": notices} if (notices := notices_of(result)) else {}),
            )
        )
        if error is None or error.startswith(SKIPPED) or not is_transient(error) or attempts >= 2:
            break
        time.sleep(backoff * attempts)
    record = CallRecord(
        tool=tool,
        args=args,
        error=error,
        duration_s=round(duration, 3),
        attempts=attempts,
        chars=len(result.text) if result is not None else 0,
    )
    return (found if error is None else []), _with_reason(record, reason), log


def _with_reason(record: CallRecord, reason: Reason) -> CallRecord:
    """A failed call's record with the cause and fix its tool named."""
    if record["error"] is not None and "cause" in reason:
        record["cause"] = reason["cause"]
    if record["error"] is not None and "fix" in reason:
        record["fix"] = reason["fix"]
    if record["error"] is not None and reason.get("lasting"):
        record["lasting"] = True
    return record


def run_calls(
    services: Services,
    spec: StepTool | None,
    planned: Sequence[Planned],
    ctx: ToolContext,
    step_id: str,
    timing: Mapping[str, float | None],
) -> list[tuple[list[Found], CallRecord, list[EventEntry]]]:
    """A step's calls, in plan order: one alone as it is; several (a read step's pages) side
    by side, ``fetch_workers`` at once, all within ``fetch_seconds``."""
    if len(planned) <= 1:
        return [
            call_with_retry(services, spec, p, ctx, (step_id, f"{step_id}-{n}"), timing)
            for n, p in enumerate(planned)
        ]
    settings = services.settings.research
    deadline = time.time() + settings.fetch_seconds
    workers = min(settings.fetch_workers, len(planned))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="local2-read") as pool:
        futures = [
            pool.submit(  # in the step's context, so its events stream as they happen
                contextvars.copy_context().run,
                call_with_retry,
                services,
                spec,
                p,
                ctx,
                (step_id, f"{step_id}-{n}"),
                timing,
                deadline,
            )
            for n, p in enumerate(planned)
        ]
        return [f.result() for f in futures]
