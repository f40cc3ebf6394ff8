"""Running a round's steps: ``execute``, the scheduler between steps, and ``run_step``; each
step's tool calls within their timeouts and budget; what their results bring into the
ledger; and a search's hits reranked against its sub-question.
"""

from __future__ import annotations

import contextvars
import re
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from math import ceil
from pathlib import PurePosixPath
from typing import Any, TypedDict, cast

from langgraph.runtime import Runtime
from langgraph.types import Send

from local2 import events
from local2.config import ResearchSettings
from local2.contracts import LOCAL_NAME, EventEntry, SourceMeta
from local2.documents import page_link, page_sections
from local2.errors import ToolError
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
    Why,
    file_sources,
    is_url,
    page_read,
    pages_in,
    search_hits,
    source_budget,
    step_catalog,
    url_key,
)
from local2.retrieval import bm25_scores, terms
from local2.tools import LIBRARY_EMPTY, TIMEOUT, ToolContext, ToolResult, cause_of, lasting_of

# --- rerank -----------------------------------------------------------------------------
# A research search's hits, de-duplicated and reranked against its sub-question.
#
# A research search asks for many results (``research.search_results``) so a page the engine
# placed 8th can still be read; which of them are read is then decided here, cheaply and
# locally: Okapi BM25 of each hit's title and snippet for the sub-question, on the same
# tokeniser as ``web_fetch``'s passages and the ``corpus`` provider
# (:func:`local2.retrieval.bm25_scores`), blended with the engine's own order, which
# weighs more (:data:`ENGINE_WEIGHT`), so a snippet that happens to repeat the words does not
# bury what the engine, which read the whole page, ranked first. Each hit also keeps how well
# it matches beside the best match (``Why.match``, :func:`matches`): a read passes over a hit
# that matches little, and stops short where none does.
#
# Why BM25 and not the MiniLM embedder: a few dozen snippets cost microseconds and no memory
# (``bench/research.py`` measures both); the embedder costs a model load and milliseconds per
# snippet on two shared cores, and a multi-hop question's hops are named entities, which
# lexical matching finds at least as well.

# The share of the score that is the engine's own order. A snippet is a weak signal beside
# an engine that read the whole page: on the multi-hop set (bench/evidence_recall.py, an
# engine ranking by BM25 over whole pages) a weight of 0.3 keeps 114 of 124 gold pages in the
# top 5 of the question's search against the engine's 124, 0.8 keeps 123 (and 95 of 95
# in the top 3); the snippet then decides between hits the engine placed close together.
ENGINE_WEIGHT = 0.8


def matches(texts: Sequence[str], query: str) -> list[float]:
    """Each text's BM25 for ``query`` as a share of the best one's, 0 to 1: how well it
    matches beside the others (1 for every text when none has a word of the query: no
    sign either way)."""
    lexical = bm25_scores([terms(t) for t in texts], set(terms(query)), k1=1.2, b=0.75)
    best = max(lexical, default=0.0)
    return [round(v / best, 4) if best > 0 else 1.0 for v in lexical]


def rerank_scores(texts: Sequence[str], query: str) -> list[float]:
    """Each text's score for ``query``, 0 to 1: its :func:`matches` share blended with its
    position (the engine's order: the first is 1, the last 0)."""
    n = len(texts)
    shares = matches(texts, query)
    return [
        round((1 - ENGINE_WEIGHT) * share + ENGINE_WEIGHT * (1.0 - i / n), 4)
        for i, share in enumerate(shares)
    ]


def rerank(hits: Sequence[Found], query: str, step: str) -> list[Found]:
    """``hits`` (in the engine's order) once per URL, best first for ``query``, each with
    :class:`Why` it ranks there (its engine rank, its score, the step and query)."""
    unique: list[Found] = []
    seen: set[str] = set()
    for hit in hits:
        key = url_key(hit["url"])
        if key not in seen:
            seen.add(key)
            unique.append(hit)
    texts = [f"{h['title']} {h['text']}" for h in unique]
    scores, shares = rerank_scores(texts, query), matches(texts, query)
    ranked: list[Found] = []
    for rank, (hit, score, share) in enumerate(zip(unique, scores, shares, strict=True), start=1):
        why = Why(found_by=step, query=query, rank=rank, score=score, match=share)
        item = hit.copy()
        item["why"] = why
        ranked.append(item)
    ranked.sort(key=lambda h: -h["why"]["score"])  # stable: ties keep the engine's order
    return ranked


# --- readings ---------------------------------------------------------------------------
# What a step's tool result brings into the evidence ledger: every read, under its label.
#
# A web search's hits and a file search's hits are sources *found* (``result``: the snippet is
# their text); a read is a source *read* (``page``). Results of the known shapes are read as
# such (``web_fetch``'s ``URL:`` / ``Extracted text:``, ``read_file``'s ``File:`` header);
# any other tool's result is one source, named by the argument that says what it reads, or
# by the call itself. A result that marks its pages (``[Page N]`` or ``[Page N of M]`` lines,
# also slides and chapters, as ``web_fetch`` of a document and ``read_file`` write them: read
# by :func:`local2.documents.page_sections`) is filed page by page, each under
# ``<label>#page=N``, so a citation names the file and the page, and is verified against that
# page's text only.

_FILE_HIT = re.compile(
    r"^\[\d+\]\s+(?P<label>[^\n]+?)(?:\s+\((?P<note>[^)\n]*)\))?[ \t]*\n"
    r"(?P<snippet>(?:[ \t]+\S.*(?:\n|$))+)",
    re.MULTILINE,
)
_FILE_HEADER = re.compile(r"\AFile:\s*(?P<path>[^\n]+)\n(?:.*?\n)?---\n(?P<text>.*)\Z", re.DOTALL)
_HIT_PAGE = re.compile(r"^(?P<path>.+?), (?:page|slide|sheet|section|chapter) (?P<n>\d+)$", re.I)


def listed_hits(text: str, step: str, tool: str, at: float) -> list[Found]:
    """Hits of a listing that numbers them (``[1] notes/a.md (lines 3-9, ...)`` and an
    indented snippet under each), as ``search_files`` writes them; a hit in a document's page
    (``[1] docs/report.pdf, page 12 (...)``) is that page, ``docs/report.pdf#page=12``."""
    found: list[Found] = []
    for m in _FILE_HIT.finditer(text):
        label = m.group("label").strip()
        paged = _HIT_PAGE.match(label)
        page = int(paged.group("n")) if paged else None
        found.append(
            Found(
                url=page_link(paged.group("path"), page) if paged else label,
                title=label,
                text=" ".join(m.group("snippet").split()),
                kind="result",
                at=at,
                step=step,
                tool=tool,
                page=page,
            )
        )
    return found


def split_label(label: str) -> tuple[str, int | None]:
    """``docs/report.pdf#page=12`` as ``("docs/report.pdf", 12)``; any other label whole."""
    base, _, fragment = label.partition("#page=")
    return (base, int(fragment)) if fragment.isdigit() else (label, None)


def split_pages(text: str) -> list[tuple[int | None, str]]:
    """``text`` as ``(page, text)`` pieces by its page markers; ``[(None, text)]`` without."""
    pages: list[tuple[int | None, str]] = [(n, body) for n, body in page_sections(text)]
    return [(n, body) for n, body in pages if body.strip()] or [(None, text)]


def _read(label: str, title: str, text: str, step: str, tool: str, at: float) -> list[Found]:
    """One read source, or one per page when the text marks its pages."""
    base, asked = split_label(label)  # the page the call asked for, when its text names none
    paged = _HIT_PAGE.match(title)  # a hit's title names its page: the file's name is before
    name = (paged.group("path") if paged else title) or PurePosixPath(base).name or label
    found: list[Found] = []
    for marked, body in split_pages(text.strip()):
        page = marked or asked
        found.append(
            Found(
                url=page_link(label, page),
                title=f"{name}, page {page}" if page else name,
                text=body,
                kind="page",
                at=at,
                step=step,
                tool=tool,
                page=page,
            )
        )
    return found


def found_in(
    tool: StepTool, args: Mapping[str, Any], text: str, step: str, title: str = ""
) -> list[Found]:
    """The sources one call's result ``text`` found or read (see the module docstring)."""
    at = time.time()
    if tool.finder:
        hits = search_hits(text, step, at) if tool.finds_urls else []
        for hit in hits:
            hit["tool"] = tool.name
        return hits or listed_hits(text, step, tool.name, at)
    label = tool.label(args)
    if args.get("pages") and str(args["pages"]).isdigit():  # one page of a document, asked for
        label = page_link(label, int(str(args["pages"])))
    if tool.takes_urls and is_url(label):
        page = page_read(text, label, step, title, at)
        if page is not None and not page_sections(page["text"]):
            page["tool"] = tool.name
            return [page]
        if page is not None:  # a document web_fetch read: its pages, each under #page=N
            return _read(label, title or page["title"], page["text"], step, tool.name, at)
    header = _FILE_HEADER.match(text.strip())
    if header is not None:  # read_file's evidence header, then the text
        named = label if tool.target else header.group("path").strip()
        return _read(named, title, header.group("text"), step, tool.name, at)
    return _read(label, title, text, step, tool.name, at) if text.strip() else []


# --- calls ------------------------------------------------------------------------------
# A step's tool calls: each within its timeout, retried once after a transient failure, and
# a read step's calls side by side within its budget of seconds.
#
# A read step reads several pages (``research.fetch_count`` a round); they are fetched at once
# (``research.fetch_workers``, each through the tool, so ``web_fetch``'s caps and the
# untrusted-page rules hold), and all within ``research.fetch_seconds``: a fetch still running
# when that time is up is stopped and recorded as skipped, and one not yet started is skipped
# without being called, so the run goes on with what was read instead of waiting.

_TRANSIENT = re.compile(r"timeout|timed out|\b(?:failed|status):? (?:429|5\d\d)\b", re.I)
NO_TEXT = "(no readable text found on this page)"
SKIPPED = "skipped: the read budget"  # how a call the budget of seconds cut off begins


class Reason(TypedDict, total=False):
    """A failed call's cause and fix, when its tool named them, and whether no other query
    of that tool can succeed (tools/_search_failures.py, ``LASTING``)."""

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
    for a run that must say what to do when nothing was found (research/_report.py)."""
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


# --- execute ----------------------------------------------------------------------------
# ``execute`` and ``run_step``: run each step as soon as what it requires is done.
#
# ``execute`` is the scheduler between steps. It files the sources of finished steps into the
# ledger (in plan order, so numbers never depend on timing), sends a failure that no retry
# cured to ``replan``, and hands up to ``max_parallel`` ready steps to ``run_step`` (LangGraph
# ``Send``: they run side by side, and each one's result is checkpointed the moment it
# finishes, so a resumed run repeats none of them). With nothing left to run, ``reflect``.
#
# A search step's results are reranked against its query (:mod:`local2.research._execute`); its
# best ``file_results`` enter the ledger (those never read reach the report as snippets), and
# a step that reads "the top results" of it reads the best ones not read yet, by that order:
# its ``top``, then on down the ranking those whose title and snippet match the query at least
# :data:`RELEVANT` as well as the best-matching result does, up to its share of the round's
# ``fetch_count`` (each URL read once a run, however many searches found it). So a read stops
# short where the results stop matching, and reads a match the engine placed 9th.
#
# ``run_step`` makes a step's tool calls (:mod:`local2.research._execute`): a research search asks
# for ``search_results`` hits, a read step's pages are fetched side by side within
# ``fetch_seconds``. A transient failure (timeout, 429, 5xx) is retried once after a pause; a
# search with no results or a page that fails for good fails the step.

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
        round=step.get("round"),
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
