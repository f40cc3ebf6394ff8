"""``execute`` and ``run_step``: run each step as soon as what it requires is done.

``execute`` is the scheduler between steps. It files the sources of finished steps into the
ledger (in plan order, so numbers never depend on timing), sends a failure that no retry
cured to ``replan``, and hands up to ``max_parallel`` ready steps to ``run_step`` (LangGraph
``Send``: they run side by side, and each one's result is checkpointed the moment it
finishes, so a resumed run repeats none of them). With nothing left to run, ``reflect``.

A search step's results are reranked against its query (:mod:`local2.research.rerank`); its
best ``file_results`` enter the ledger (those never read reach the report as snippets), and
a step that reads "the top results" of it reads the best ones not read yet, by that order:
its ``top``, then on down the ranking those whose title and snippet match the query at least
:data:`RELEVANT` as well as the best-matching result does, up to its share of the round's
``fetch_count`` (each URL read once a run, however many searches found it). So a read stops
short where the results stop matching, and reads a match the engine placed 9th.

``run_step`` makes a step's tool calls (:mod:`local2.research.calls`): a research search asks
for ``search_results`` hits, a read step's pages are fetched side by side within
``fetch_seconds``. A transient failure (timeout, 429, 5xx) is retried once after a pause; a
search with no results or a page that fails for good fails the step.
"""

from __future__ import annotations

import re
import time
from math import ceil
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Send

from local2 import events
from local2.config import ResearchSettings
from local2.contracts import LOCAL_NAME
from local2.graph import Services, TurnContext, event
from local2.research._plan import COMPOSE, call_key
from local2.research._planner import inbox_of, take_says
from local2.research._prompts import hopped
from local2.research._state import (
    FROM_STEP,
    TOP,
    CallRecord,
    Found,
    ReadyStep,
    ResearchState,
    ResearchUpdate,
    Source,
    StepRecord,
    StepRun,
    StepTool,
    StepTools,
    Target,
    file_sources,
    pages_in,
    source_budget,
    step_catalog,
    url_key,
)
from local2.research.calls import Planned, run_calls
from local2.research.readings import split_label
from local2.research.rerank import rerank
from local2.tools import ToolContext

# Past a read's ``top``, a result is worth reading when its title and snippet's BM25 for the
# query is at least this share of the best result's (``Why.match``), within the read's share
# of ``fetch_count``, ``fetch_seconds`` and ``max_sources``. Chosen on the public set's
# development slice (questions 101-300, bench/HISTORY.md "Research reads what matters"): 0.3
# with fetch_count 8 read as many pages as a fixed five did; 0.2 read 1.1 more a question
# for 5 more of 1,270 gold sentences; 0.3 with fetch_count 5 stopped too often.
RELEVANT = 0.3


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


def reads_targets(tool: StepTool | None, args: dict[str, Any]) -> bool:  # args as planned
    """A step that reads sources named one by one: the results of a finder step, or the one
    source its target argument names."""
    return (
        tool is not None
        and tool.target is not None
        and (bool(args.get(FROM_STEP)) or bool(args.get(tool.target)))
    )


def _read_targets(
    state: ResearchState,
    step: StepRecord,
    reader: StepTool,
    room: int,
    skip: set[str],
    wanted: int,
) -> list[Target]:
    """The sources a read step will read: its target, or the ``wanted`` best results of the
    finder step it names not read or being read yet (``skip``: forbidden calls and the URL
    keys other steps read now), only those this reader can read (URLs, or files)."""
    ledger = state.get("ledger") or []
    read = {url_key(s["url"]) for s in ledger if s["kind"] == "page"}
    args = step["args"]
    target = str(reader.target)
    explicit = args.get(target)
    if explicit:
        label = str(explicit).strip()
        if reader.takes_urls and not _given(state, label, ledger):
            return []
        candidates = [Target(url=label, title="")]
    else:
        source = (state.get("steps") or {}).get(str(args.get(FROM_STEP, "")), {})
        hits = source.get("found") or []  # best first (reranked when the search finished)
        candidates = [
            Target(url=f["url"], title=f["title"], why=f.get("why"))
            for f in hits
            if reader.can_read(f["url"])
        ][:50]
    least = int(args.get(TOP) or 1)
    targets: list[Target] = []
    for c in candidates:
        key = url_key(c["url"])
        if key in read or key in skip or call_key(reader.name, {target: c["url"]}) in skip:
            continue
        if room <= 0:  # every page read counts against max_sources
            break
        if len(targets) >= least and _match(c) < RELEVANT:
            continue  # its title and snippet match the query too little to be worth a read
        room -= 1
        targets.append(c)
        if len(targets) >= wanted or explicit:
            break
    return targets


def _match(target: Target) -> float:
    """How well a result's title and snippet match its search's query, beside the best
    result's (1 when not known: a run from before the share was kept)."""
    why = target.get("why")
    return float(why.get("match", 1.0)) if why else 1.0


def read_share(steps: dict[str, StepRecord], step: StepRecord, settings: ResearchSettings) -> int:
    """The most results a read of "the top results" reads: its ``top``, or its share of the
    round's ``fetch_count`` when that is more (the round's such reads divide it); past its
    ``top`` it reads only results that match (:data:`RELEVANT`). The rule's second hop reads
    the same way: a search for a name often has that name's page below the top two."""
    top = int(step["args"].get(TOP) or 1)
    if not step["args"].get(FROM_STEP):
        return top
    peers = [
        s
        for s in steps.values()
        if s.get("round") == step.get("round") and s["args"].get(FROM_STEP)
    ]
    return max(top, ceil(settings.fetch_count / max(1, len(peers))))


def filed_found(step: StepRecord, tools: StepTools, file_results: int) -> list[Found]:
    """What a finished step brings into the ledger: all it read, or a search's best
    ``file_results`` hits (the rest wait in the step for a read step to pick)."""
    found = list(step.get("found") or [])
    spec = tools.get(step["tool"])
    if spec is not None and spec.finder and any(f.get("why") for f in found):
        return found[:file_results]
    return found


def execute(state: ResearchState, runtime: Runtime[TurnContext]) -> ResearchUpdate:
    services = runtime.context.services
    said, log = take_says(state, services, inbox_of(runtime))  # the person's says, first
    if said:
        steps_now = {**(state.get("steps") or {}), **said["steps"]}
        state = {**state, **said, "steps": steps_now}  # type: ignore[typeddict-item]  # this node's own update of the state
    update = _schedule(state, services, log)
    if said:
        rest: ResearchUpdate = {**said}
        rest.pop("steps", None)
        update = {**update, **rest}
        update["steps"] = {**said["steps"], **(update.get("steps") or {})}
    return update


def _schedule(state: ResearchState, services: Services, log: list[Any]) -> ResearchUpdate:
    """File what finished, then hand out the next ready steps (or replan, or reflect)."""
    settings = services.settings.research
    steps = dict(state.get("steps") or {})
    order = list(state.get("order") or [])
    filed = list(state.get("filed") or [])

    tools = step_catalog(services)
    budget = source_budget(state, settings.max_sources)
    finished = [i for i in order if steps[i]["status"] in ("done", "failed") and i not in filed]
    ledger, _ = file_sources(
        state.get("ledger") or [],
        [f for i in finished for f in filed_found(steps[i], tools, settings.file_results)],
        budget,
    )
    forbidden = _forbid_failed(steps, finished, list(state.get("forbidden") or []))
    update: ResearchUpdate = {
        "ledger": ledger,
        "filed": filed + finished,
        "forbidden": forbidden,
        "event_log": log,
    }
    handled = set(state.get("handled") or [])
    # The person stopped the run: write from what was read (its follow-ups still search).
    if state.get("stopped") and not state.get("followup"):
        return {**update, "decision": "reflect", "ready": []}
    if any(steps[i]["status"] == "failed" and i not in handled for i in order):
        return {**update, "decision": "replan", "ready": []}

    ready, skipped = _hand_out(state, steps, tools, ledger, forbidden, budget, settings, log)
    if skipped:
        update["steps"] = skipped
        steps.update(skipped)
        if not ready:  # what was waiting on a skipped step may be ready now
            return {**update, "decision": "execute", "ready": []}
    if ready:
        return {**update, "decision": "run", "ready": ready}
    return {**update, "decision": "reflect", "ready": []}


def _forbid_failed(
    steps: dict[str, StepRecord], finished: list[str], forbidden: list[str]
) -> list[str]:
    """``forbidden`` with the calls of the finished steps that failed added: a replan must
    not repeat them."""
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
    return forbidden


NOTHING_TO_READ = (
    "nothing left to read (already read, forbidden, no room, or a URL that neither "
    "the question nor a search gave)"
)


def _hand_out(
    state: ResearchState,
    steps: dict[str, StepRecord],
    tools: StepTools,
    ledger: list[Source],
    forbidden: list[str],
    budget: int,
    settings: ResearchSettings,
    log: list[Any],
) -> tuple[list[ReadyStep], dict[str, StepRecord]]:
    """Up to ``max_parallel`` pending steps whose requirements are done, each with the pages
    it reads; and the steps skipped (logged) for having nothing to read or no room."""
    view: ResearchState = {**state, "ledger": ledger}
    room = budget - pages_in(ledger)
    banned = set(forbidden)  # and the URLs read by the steps handed out now
    ready: list[ReadyStep] = []
    skipped: dict[str, StepRecord] = {}
    for i in state.get("order") or []:
        step = steps[i]
        if step["status"] != "pending" or step["tool"] == COMPOSE or not _satisfied(steps, step):
            continue
        if len(ready) >= settings.max_parallel:
            break
        targets: list[Target] = []
        why = ""
        reader = tools.get(step["tool"])
        if reader is not None and reads_targets(reader, step["args"]):
            # The rule's hop reads a name's page: its top result not read yet, no more.
            wanted = (
                int(step["args"].get(TOP) or 1)
                if hopped(view)
                else read_share(steps, step, settings)
            )
            targets = _read_targets(view, step, reader, room, banned, wanted)
            banned.update(url_key(t["url"]) for t in targets)
            room -= len(targets)
            why = "" if targets else NOTHING_TO_READ
        elif room <= 0:
            why = f"the source budget ({budget}) is spent"
        if why:
            skipped[i] = {**step, "status": "skipped", "error": why}
            log.append(event(state, events.RESEARCH_STEP, id=i, status="skipped", reason=why))
            continue
        ready.append({"step": StepRecord(**step), "targets": targets})
    return ready, skipped


def after_execute(state: ResearchState) -> list[Send] | str:
    decision = state.get("decision")
    if decision == "run":
        return [Send("run_step", _step_run(state, item)) for item in state.get("ready") or []]
    if decision in ("replan", "execute"):
        return decision
    return "reflect"


def _step_run(state: ResearchState, ready: ReadyStep) -> StepRun:
    """What ``run_step`` is sent for ``ready``: the step, and whose run with what question."""
    return {
        "run_id": state.get("run_id", ""),
        "started_at": state.get("started_at"),
        "question": state.get("question", ""),
        "owner": state.get("owner") or LOCAL_NAME,
        **ready,
    }


# --------------------------------------------------------------------------- one step


def planned_calls(tool: StepTool | None, step: StepRecord, targets: list[Target]) -> list[Planned]:
    """``(tool, args, title)`` of each call a step makes: one per source a read step reads
    (its target filled in, its other arguments kept), else the step's own call."""
    args = dict(step["args"])
    if tool is not None and reads_targets(tool, args):
        own = {k: v for k, v in args.items() if k not in (FROM_STEP, TOP)}
        return [
            (tool.name, {**own, **target_args(tool, t["url"])}, t.get("title", "")) for t in targets
        ]
    return [(step["tool"], args, "")]


def target_args(tool: StepTool, label: str) -> dict[str, str]:
    """The arguments that make ``tool`` read ``label``: a document's page (``#page=N``, from
    a hit in that page) goes to the tool's ``pages`` argument when it has one."""
    base, page = split_label(label)
    if page is None or tool.takes_urls:
        return {str(tool.target): label}
    paged = {str(tool.target): base}
    return {**paged, "pages": str(page)} if "pages" in tool.properties else paged


def run_step(payload: StepRun, runtime: Runtime[TurnContext]) -> ResearchUpdate:
    """Run one step's tool calls (with one retry of a transient failure each)."""
    services = runtime.context.services
    step: StepRecord = payload["step"]
    timing = {"started_at": payload.get("started_at")}
    # The question lets web_fetch keep the passages of a page that matter to it; a memory
    # tool reads the run's owner's memory only.
    spec = step_catalog(services).get(step["tool"])
    ctx = ToolContext(
        session_id=payload.get("run_id", ""),
        query_id=payload.get("run_id", ""),
        query=payload.get("question", ""),
        owner=payload.get("owner") or LOCAL_NAME,
        max_results=search_results(services) if spec is not None and spec.finds_urls else None,
        purpose="research",
    )
    log = [event(timing, events.RESEARCH_STEP, id=step["id"], status="started")]
    began = time.time()
    calls: list[CallRecord] = []
    found: list[Found] = []
    targets: list[Target] = payload.get("targets") or []
    planned = planned_calls(spec, step, targets)
    for n, (got, call, call_log) in enumerate(
        run_calls(services, spec, planned, ctx, step["id"], timing)
    ):
        calls.append(call)
        log.extend(call_log)
        why = targets[n].get("why") if n < len(targets) else None
        found.extend({**f, "why": why} if why else f for f in got)
    if spec is not None and spec.finder and "query" in step["args"]:
        found = rerank(found, str(step["args"]["query"]), step["id"])
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


def search_results(services: Services) -> int:
    """How many hits a research search asks for: by the configured provider, else the
    ``search_results`` setting (the chat's ``web_search`` keeps ``web.search.max_results``)."""
    settings = services.settings
    provider = settings.web.search.provider
    research = settings.research
    return research.search_results_by_provider.get(provider, research.search_results)
