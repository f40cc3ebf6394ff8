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
from local2.research.ledger import Found, file_sources, source_budget, url_key
from local2.research.plan_schema import COMPOSE, call_key
from local2.research.readings import found_in, split_label
from local2.research.state import CallRecord, ResearchState, StepRecord
from local2.research.steering import inbox_of, take_says
from local2.research.step_tools import FROM_STEP, TOP, StepTool, step_catalog
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


def reads_targets(tool: StepTool | None, args: dict[str, Any]) -> bool:
    """A step that reads sources named one by one: the results of a finder step, or the one
    source its target argument names."""
    return (
        tool is not None
        and tool.target is not None
        and (bool(args.get(FROM_STEP)) or bool(args.get(tool.target)))
    )


def _read_targets(
    state: ResearchState, step: StepRecord, reader: StepTool, room: int, forbidden: set[str]
) -> list[dict[str, str]]:
    """The sources a read step will read: its target, or the top unread results of the
    finder step it names (only those this reader can read: URLs, or files)."""
    ledger = state.get("ledger") or []
    read = {url_key(s["url"]) for s in ledger if s["kind"] == "page"}
    known = {url_key(s["url"]) for s in ledger}
    args = step["args"]
    target = str(reader.target)
    explicit = args.get(target)
    if explicit:
        label = str(explicit).strip()
        if reader.takes_urls and not _given(state, label, ledger):
            return []
        candidates = [{"url": label, "title": ""}]
    else:
        source = (state.get("steps") or {}).get(str(args.get(FROM_STEP, "")), {})
        hits = source.get("found") or []
        candidates = [
            {"url": f["url"], "title": f["title"]} for f in hits if reader.can_read(f["url"])
        ][:20]
    targets = []
    for c in candidates:
        key = url_key(c["url"])
        if key in read or call_key(reader.name, {target: c["url"]}) in forbidden:
            continue
        if key not in known:
            if room <= 0:
                continue
            room -= 1
        targets.append(c)
        if len(targets) >= int(args.get(TOP) or 1) or explicit:
            break
    return targets


def execute(state: ResearchState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    services = runtime.context.services
    said, log = take_says(state, services, inbox_of(runtime))  # the person's says, first
    if said:
        steps_now = {**(state.get("steps") or {}), **said["steps"]}
        state = {**state, **said, "steps": steps_now}  # type: ignore[typeddict-item]  # this node's own update of the state
    update = _schedule(state, services, log)
    if said:
        update = {**update, **{k: v for k, v in said.items() if k != "steps"}}
        update["steps"] = {**said["steps"], **(update.get("steps") or {})}
    return update


def _schedule(state: ResearchState, services: Services, log: list[Any]) -> dict[str, Any]:
    """File what finished, then hand out the next ready steps (or replan, or reflect)."""
    settings = services.settings.research
    steps = dict(state.get("steps") or {})
    order = list(state.get("order") or [])
    filed = list(state.get("filed") or [])
    forbidden = list(state.get("forbidden") or [])

    budget = source_budget(state, settings.max_sources)
    finished = [i for i in order if steps[i]["status"] in ("done", "failed") and i not in filed]
    ledger, _ = file_sources(
        state.get("ledger") or [],
        [f for i in finished for f in steps[i].get("found") or []],
        budget,
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
    if state.get("stopped"):  # the person stopped the run: write from what was read
        return {**update, "decision": "reflect", "ready": []}
    if any(steps[i]["status"] == "failed" and i not in handled for i in order):
        return {**update, "decision": "replan", "ready": []}

    view: ResearchState = {**state, "ledger": ledger}
    room = budget - len(ledger)
    banned = set(forbidden)
    ready: list[dict[str, Any]] = []
    skipped: dict[str, Any] = {}
    tools = step_catalog(services)
    for i in order:
        step = steps[i]
        if step["status"] != "pending" or step["tool"] == COMPOSE or not _satisfied(steps, step):
            continue
        if len(ready) >= settings.max_parallel:
            break
        targets: list[dict[str, str]] = []
        why = ""
        reader = tools.get(step["tool"])
        if reader is not None and reads_targets(reader, step["args"]):
            targets = _read_targets(view, step, reader, room, banned)
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
            why = f"the source budget ({budget}) is spent"
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


def _soft_failure(tool: StepTool | None, found: list[Found], result: ToolResult) -> str | None:
    """A call that answered but gave nothing to use."""
    text = result.text.strip()
    if tool is not None and tool.finder and not found:
        return f"no results: {text[:160]}"
    if text.endswith(NO_TEXT) or not text:
        return "no readable text" + (" on the page" if text else "")
    return None


def _call_with_retry(
    services: Services,
    spec: StepTool | None,
    planned: tuple[str, dict[str, Any], str],
    ctx: ToolContext,
    step_id: str,
    call_id: str,
    timing: dict[str, Any],
    log: list[EventEntry],
) -> tuple[list[Found], CallRecord]:
    """One planned call, tried again once after a transient failure (timeout, 429, 5xx):
    the sources it found or read, and its record."""
    tool, args, title = planned
    backoff = services.settings.research.retry_backoff_s
    error: str | None = None
    result: ToolResult | None = None
    found: list[Found] = []
    attempts = 0
    duration = 0.0
    while attempts < 2:
        attempts += 1
        log.append(event(timing, events.tool_request(tool), tool=tool, args=args, call_id=call_id))
        result, error, duration = call_tool(services, tool, args, ctx, call_id)
        found = []
        if result is not None:
            found = found_in(spec, args, result.text, step_id, title) if spec is not None else []
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
    return (found if error is None else []), record


def planned_calls(
    tool: StepTool | None, step: StepRecord, targets: list[dict[str, str]]
) -> list[tuple[str, dict[str, Any], str]]:
    """``(tool, args, title)`` of each call a step makes: one per source a read step reads
    (its target filled in, its other arguments kept), else the step's own call."""
    args = dict(step["args"])
    if tool is not None and reads_targets(tool, args):
        own = {k: v for k, v in args.items() if k not in (FROM_STEP, TOP)}
        return [
            (tool.name, {**own, **target_args(tool, t["url"])}, t.get("title", "")) for t in targets
        ]
    return [(step["tool"], args, "")]


def target_args(tool: StepTool, label: str) -> dict[str, Any]:
    """The arguments that make ``tool`` read ``label``: a document's page (``#page=N``, from
    a hit in that page) goes to the tool's ``pages`` argument when it has one."""
    base, page = split_label(label)
    if page is None or tool.takes_urls:
        return {str(tool.target): label}
    paged = {str(tool.target): base}
    return {**paged, "pages": str(page)} if "pages" in tool.properties else paged


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
    spec = step_catalog(services).get(step["tool"])
    for n, planned in enumerate(planned_calls(spec, step, payload.get("targets") or [])):
        got, call = _call_with_retry(
            services, spec, planned, ctx, step["id"], f"{step['id']}-{n}", timing, log
        )
        calls.append(call)
        found.extend(got)
    errors = [c["error"] for c in calls if c["error"]]
    ok = bool(found) and (spec is None or not spec.finder or not errors)
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
