"""``execute`` and ``run_step``: run each step as soon as what it requires is done.

``execute`` is the scheduler between steps. It files the sources of finished steps into the
ledger (in plan order, so numbers never depend on timing), sends a failure that no retry
cured to ``replan``, and hands up to ``max_parallel`` ready steps to ``run_step`` (LangGraph
``Send``: they run side by side, and each one's result is checkpointed the moment it
finishes, so a resumed run repeats none of them). With nothing left to run, ``reflect``.

``run_step`` makes a step's tool calls. A transient failure (timeout, 429, 5xx) is retried
once after a pause; a search with no results or a page that fails for good fails the step.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Send

from local2 import events
from local2.contracts.people import LOCAL_NAME
from local2.contracts.records import EventEntry
from local2.errors import ToolError
from local2.graph.context import TurnContext
from local2.graph.emit import event
from local2.graph.services import Services
from local2.research.ledger import Found, file_sources, page_read, search_hits, url_key
from local2.research.plan_schema import COMPOSE, FETCH, SEARCH, call_key
from local2.research.state import CallRecord, ResearchState, StepRecord
from local2.tools.base import ToolContext, ToolResult

_TRANSIENT = re.compile(r"timeout|timed out|\b(?:failed|status):? (?:429|5\d\d)\b", re.I)
NO_TEXT = "(no readable text found on this page)"


def is_transient(error: str) -> bool:
    """Worth one retry: a timeout, a rate limit or a server error."""
    return bool(_TRANSIENT.search(error))


def _satisfied(steps: dict[str, StepRecord], step: StepRecord) -> bool:
    return all(steps.get(r, {}).get("status") in ("done", "skipped") for r in step["requires"])


def _given(state: ResearchState, url: str, ledger: list[Any]) -> bool:
    """A URL the person wrote in the question or a search of this run found (a URL the model
    made up could carry data out, and a run has no one to ask: docs/architecture.md, "Trust
    boundaries")."""
    if state.get("trust_urls"):
        return True
    key = url_key(url)
    question = state.get("question", "")
    return key in {url_key(u) for u in re.findall(r"https?://\S+", question)} or any(
        url_key(s["url"]) == key for s in ledger
    )


def _read_targets(
    state: ResearchState, step: StepRecord, room: int, forbidden: set[str]
) -> list[dict[str, str]]:
    """The pages a read step will fetch: its URL, or the top unread results of its search."""
    ledger = state.get("ledger") or []
    read = {url_key(s["url"]) for s in ledger if s["kind"] == "page"}
    known = {url_key(s["url"]) for s in ledger}
    args = step["args"]
    if args.get("url"):
        if not _given(state, args["url"], ledger):
            return []
        candidates = [{"url": args["url"], "title": ""}]
    else:
        source = (state.get("steps") or {}).get(args.get("from_step", ""), {})
        candidates = [{"url": f["url"], "title": f["title"]} for f in source.get("found") or []][
            :20
        ]
    targets = []
    for c in candidates:
        key = url_key(c["url"])
        if key in read or call_key(FETCH, {"url": c["url"]}) in forbidden:
            continue
        if key not in known:
            if room <= 0:
                continue
            room -= 1
        targets.append(c)
        if len(targets) >= int(args.get("top") or 1) or args.get("url"):
            break
    return targets


def execute(state: ResearchState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    services = runtime.context.services
    settings = services.settings.research
    steps = dict(state.get("steps") or {})
    order = list(state.get("order") or [])
    filed = list(state.get("filed") or [])
    forbidden = list(state.get("forbidden") or [])
    log: list[Any] = []

    finished = [i for i in order if steps[i]["status"] in ("done", "failed") and i not in filed]
    ledger, _ = file_sources(
        state.get("ledger") or [],
        [f for i in finished for f in steps[i].get("found") or []],
        settings.max_sources,
    )
    for i in finished:
        step = steps[i]
        if step["status"] != "failed":
            continue
        failed_calls = [c for c in step.get("calls") or [] if c.get("error")]
        # A read of "the top results of s1" is not itself forbidden: the pages that failed are.
        own = [] if step["args"].get("from_step") else [call_key(step["tool"], step["args"])]
        for key in own + [call_key(c["tool"], c["args"]) for c in failed_calls]:
            if key not in forbidden:
                forbidden.append(key)
    update: dict[str, Any] = {
        "ledger": ledger,
        "filed": filed + finished,
        "forbidden": forbidden,
        "event_log": log,
    }
    handled = set(state.get("handled") or [])
    if any(steps[i]["status"] == "failed" and i not in handled for i in order):
        return {**update, "decision": "replan", "ready": []}

    view: ResearchState = {**state, "ledger": ledger}
    room = settings.max_sources - len(ledger)
    banned = set(forbidden)
    ready: list[dict[str, Any]] = []
    skipped: dict[str, Any] = {}
    for i in order:
        step = steps[i]
        if step["status"] != "pending" or step["tool"] == COMPOSE or not _satisfied(steps, step):
            continue
        if len(ready) >= settings.max_parallel:
            break
        targets: list[dict[str, str]] = []
        why = ""
        if step["tool"] == FETCH:
            targets = _read_targets(view, step, room, banned)
            room -= len(targets)
            why = (
                ""
                if targets
                else (
                    "nothing left to read (already read, forbidden, no room, or a URL that neither "
                    "the question nor a search gave)"
                )
            )
        elif room <= 0:
            why = f"the source budget ({settings.max_sources}) is spent"
        if why:
            skipped[i] = {**step, "status": "skipped", "error": why}
            log.append(event(state, events.RESEARCH_STEP, id=i, status="skipped", reason=why))
            continue
        ready.append({"step": dict(step), "targets": targets})
    if skipped:
        update["steps"] = skipped
        steps.update(skipped)
        if not ready:  # what was waiting on a skipped step may be ready now
            return {**update, "decision": "execute", "ready": []}
    if ready:
        return {**update, "decision": "run", "ready": ready}
    return {**update, "decision": "reflect", "ready": []}


def after_execute(state: ResearchState) -> list[Send] | str:
    decision = state.get("decision")
    if decision == "run":
        base = {
            "run_id": state.get("run_id", ""),
            "started_at": state.get("started_at"),
            "question": state.get("question", ""),
            "owner": state.get("owner") or LOCAL_NAME,
        }
        return [Send("run_step", {**base, **item}) for item in state.get("ready") or []]
    if decision in ("replan", "execute"):
        return decision
    return "reflect"


# --------------------------------------------------------------------------- one step


def call_tool(
    services: Services, name: str, args: dict[str, Any], ctx: ToolContext, call_id: str
) -> tuple[ToolResult | None, str | None, float]:
    """One tool call within its timeout: ``(result, error, seconds)``."""
    tool = services.tools.get(name)
    if tool is None:
        return None, f"unknown tool: {name!r}", 0.0
    timeout = tool.timeout_s or services.settings.generator.tool_timeout_s
    started = services.runner.start(tool, args, ctx, call_id)
    try:
        result = started.future.result(timeout=timeout)
        error = None
    except FutureTimeout:
        services.runner.stop([started])  # cancelled and waited for, not abandoned
        result, error = None, f"tool timeout after {timeout:g}s"
    except ToolError as exc:
        result, error = None, str(exc)
    except Exception as exc:
        result, error = None, f"{type(exc).__name__}: {exc}"
    finally:
        services.runner.take(ctx.query_id, call_id)
    return result, error, time.time() - started.started_at


def _soft_failure(tool: str, result: ToolResult) -> str | None:
    """A call that answered but gave nothing to use."""
    text = result.text.strip()
    if tool == SEARCH and (text.startswith("No results found") or not search_hits(text, "")):
        return f"no results: {text[:160]}"
    if tool == FETCH and text.endswith(NO_TEXT):
        return "no readable text on the page"
    return None


def _call_with_retry(
    services: Services,
    tool: str,
    args: dict[str, Any],
    ctx: ToolContext,
    call_id: str,
    timing: dict[str, Any],
    log: list[EventEntry],
) -> tuple[ToolResult | None, CallRecord]:
    """One planned call, tried again once after a transient failure (timeout, 429, 5xx)."""
    backoff = services.settings.research.retry_backoff_s
    error: str | None = None
    result: ToolResult | None = None
    attempts = 0
    duration = 0.0
    while attempts < 2:
        attempts += 1
        log.append(event(timing, events.tool_request(tool), tool=tool, args=args, call_id=call_id))
        result, error, duration = call_tool(services, tool, args, ctx, call_id)
        if result is not None:
            error = _soft_failure(tool, result)
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
            )
        )
        if error is None or not is_transient(error) or attempts >= 2:
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
    return (result if error is None else None), record


def run_step(payload: dict[str, Any], runtime: Runtime[TurnContext]) -> dict[str, Any]:
    """Run one step's tool calls (with one retry of a transient failure each)."""
    services = runtime.context.services
    step: StepRecord = payload["step"]
    timing = {"started_at": payload.get("started_at")}
    # The question lets web_fetch keep the passages of a page that matter to it; a memory
    # tool reads the run's owner's memory only.
    ctx = ToolContext(
        session_id=payload.get("run_id", ""),
        query_id=payload.get("run_id", ""),
        query=payload.get("question", ""),
        owner=payload.get("owner") or LOCAL_NAME,
    )
    log = [event(timing, events.RESEARCH_STEP, id=step["id"], status="started")]
    began = time.time()
    calls: list[CallRecord] = []
    found: list[Found] = []
    if step["tool"] == SEARCH:
        planned = [(SEARCH, {"query": step["args"].get("query", "")}, "")]
    else:
        planned = [(FETCH, {"url": t["url"]}, t.get("title", "")) for t in payload["targets"]]
    for n, (tool, args, title) in enumerate(planned):
        result, call = _call_with_retry(services, tool, args, ctx, f"{step['id']}-{n}", timing, log)
        calls.append(call)
        if result is None:
            continue
        if tool == SEARCH:
            found.extend(search_hits(result.text, step["id"]))
        elif (page := page_read(result.text, args["url"], step["id"], title)) is not None:
            found.append(page)
    errors = [c["error"] for c in calls if c["error"]]
    ok = bool(found) and (step["tool"] != SEARCH or not errors)
    status = "done" if ok else "failed"
    error_text = None if ok else (errors[-1] if errors else "nothing was found")
    record: StepRecord = {
        **step,
        "status": status,
        "error": error_text,
        "calls": calls,
        "found": found,
        "duration_s": round(time.time() - began, 3),
    }
    log.append(
        event(
            timing,
            events.RESEARCH_STEP,
            id=step["id"],
            status=status,
            tool=step["tool"],
            duration_s=record["duration_s"],
            error=error_text,
            sources=len(found),
        )
    )
    return {"steps": {step["id"]: record}, "event_log": log}
