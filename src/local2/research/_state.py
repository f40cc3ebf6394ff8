"""What a research run is made of: its state (checkpointed after every step), its evidence
ledger (every source under a stable number), the tools a step may call, and its context.
Every other research module builds on these.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, TypedDict
from urllib.parse import urlsplit, urlunsplit

from local2.config import ToolsSettings
from local2.contracts import (
    WEB_SEARCH,
    Clarification,
    ClarifyRequest,
    Critique,
    EventEntry,
    Followup,
    Keep,
    NoSources,
    PlanRecord,
    ResearchCall,
    ResearchSource,
    RoundRecord,
    RunScope,
    SourceMeta,
    Sources,
    SubQuestion,
    UnsupportedSentence,
)
from local2.graph import TurnContext, turn_list
from local2.tools import SCHOLARLY_SOURCES, Tool

if TYPE_CHECKING:
    from local2.graph import Services
    from local2.storage import SteerInbox


# --- context ----------------------------------------------------------------------------
# A research run's context: the chat graph's (:class:`~local2.graph._turn.TurnContext`)
# and the run's inbox, through which what the person says reaches it while it runs.
#
# Like every context it is not checkpointed: the service passes it on every run and resume,
# and a run that brings none (a notebook, LangGraph Server) gets the graph's default, with
# the inbox it was compiled with (none on the Server: a say there has nowhere to go).


@dataclass(frozen=True, slots=True)
class ResearchContext(TurnContext):
    inbox: SteerInbox | None = None


# --- ledger -----------------------------------------------------------------------------
# The evidence ledger: every source a run found or read, under a stable number.
#
# A search result enters as a ``result`` (its snippet is its text); reading its page later
# upgrades the same entry to a ``page`` with the page text, keeping its number. Numbers are
# given in the order sources arrive and never change, so ``[n]`` means the same source from
# the first round to the report. The references list is built from here and nowhere else.
#
# ``max_sources`` bounds the pages read; results found and not read are bounded by how many
# of each search's best are filed (``file_results``): a snippet costs the model a line, and a
# result ranked but not read still counts (shown, and cited, as the snippet it is).

_HIT = re.compile(
    r"^\[\d+\]\s*Title:\s*(?P<title>.*?)\s*\n\s*Snippet:\s*(?P<snippet>.*?)\s*\n\s*URL:\s*(?P<url>\S+)",
    re.MULTILINE | re.DOTALL,
)
_PAGE = re.compile(r"\AURL:\s*(?P<url>\S+)\s*\nExtracted text:\n?(?P<text>.*)\Z", re.DOTALL)


class Found(TypedDict):
    """A source as a step saw it, before the ledger numbers it."""

    url: str
    title: str
    text: str
    kind: str  # "result" (a search hit) | "page" (read)
    at: float
    step: str
    tool: NotRequired[str]  # the tool that found or read it (runs before 38: web tools)
    page: NotRequired[int | None]  # the page of a document it is
    why: NotRequired[Why]  # how a search found it (runs before 40: not said)
    kept: NotRequired[str | None]  # read from this kept copy of the person's library (lib-...)
    meta: NotRequired[SourceMeta]  # its bibliographic record, as its source published it


class Why(TypedDict):
    """Why a source was read: where the search that found it ranked it, and the reranker."""

    found_by: str  # the step that found it
    query: str  # that step's query (its sub-question)
    rank: int  # its place in that search's results, from 1
    score: float  # the reranker's score against the sub-question, 0 to 1
    match: NotRequired[float]  # its title and snippet's BM25 for the query, / the best hit's


class Source(TypedDict):
    n: int
    url: str
    title: str
    text: str
    kind: str
    found_at: float
    read_at: float | None
    step: str
    tool: NotRequired[str]
    page: NotRequired[int | None]
    why: NotRequired[Why | None]
    kept: NotRequired[str | None]  # the kept copy it was read from (research from the library)
    meta: NotRequired[SourceMeta]  # its record (a page of a paper: the paper's)


def url_key(url: str) -> str:
    """The same page however its URL is written: no fragment (but a document's ``#page=N``,
    which names another source), lower-case host, no final '/'."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url.strip()
    path = parts.path.rstrip("/")
    page = parts.fragment if re.fullmatch(r"page=\d+", parts.fragment) else ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, page))


def search_hits(text: str, step: str, at: float | None = None) -> list[Found]:
    """The hits in a ``web_search`` result text (``tools._search.format_hits``)."""
    when = time.time() if at is None else at
    return [
        Found(
            url=m.group("url"),
            title=" ".join(m.group("title").split()),
            text=" ".join(m.group("snippet").split()),
            kind="result",
            at=when,
            step=step,
        )
        for m in _HIT.finditer(text)
    ]


def page_read(
    text: str, requested: str, step: str, title: str = "", at: float | None = None
) -> Found | None:
    """The page in a ``web_fetch`` result text, filed under the URL that was asked for."""
    match = _PAGE.match(text.strip())
    if match is None:
        return None
    body = match.group("text").strip()
    if not title:
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        title = first[:100] if 0 < len(first) <= 100 else urlsplit(requested).netloc
    return Found(
        url=requested,
        title=title,
        text=body,
        kind="page",
        at=time.time() if at is None else at,
        step=step,
    )


def file_sources(
    ledger: Sequence[Source], found: Iterable[Found], max_sources: int
) -> tuple[list[Source], list[int]]:
    """The ledger with ``found`` filed in: new sources numbered (a new page while fewer than
    ``max_sources`` pages are in it), a page read of a known result upgrading that entry.
    Returns the new ledger and touched numbers."""
    entries: list[Source] = [Source(**s) for s in ledger]
    pages = pages_in(entries)
    by_url = {url_key(s["url"]): s for s in entries}
    touched: list[int] = []
    for item in found:
        key = url_key(item["url"])
        known = by_url.get(key)
        if known is not None:
            if item["kind"] == "page" and (known["kind"] != "page" or not known["text"]):
                known["kind"], known["text"], known["read_at"] = "page", item["text"], item["at"]
                known["tool"] = item.get("tool", known.get("tool", ""))
                known["why"] = item.get("why") or known.get("why")  # the read's search
                if item.get("kept"):
                    known["kept"] = item.get("kept")
                if item["title"] and known["title"] in ("", known["url"]):
                    known["title"] = item["title"]
                if item.get("meta") and not known.get("meta"):
                    known["meta"] = item["meta"]
                touched.append(known["n"])
                pages += 1
            continue
        if item["kind"] == "page":
            if pages >= max_sources:
                continue
            pages += 1
        source: Source = {
            "n": len(entries) + 1,
            "url": item["url"],
            "title": item["title"] or item["url"],
            "text": item["text"],
            "kind": item["kind"],
            "found_at": item["at"],
            "read_at": item["at"] if item["kind"] == "page" else None,
            "step": item["step"],
            "tool": item.get("tool", ""),
            "page": item.get("page"),
            "why": item.get("why"),
        }
        if item.get("kept"):
            source["kept"] = item.get("kept")
        meta = item.get("meta") or _record_of(by_url, item["url"])
        if meta:
            source["meta"] = meta
        entries.append(source)
        by_url[key] = source
        touched.append(source["n"])
    return entries, touched


def _record_of(by_url: Mapping[str, Source], url: str) -> SourceMeta | None:
    """The record of the work a page belongs to: ``paper.pdf#page=3`` is ``paper.pdf``'s."""
    base = url.split("#page=", 1)[0]
    known = by_url.get(url_key(base)) if base != url else None
    return known.get("meta") if known is not None else None


def pages_in(ledger: Iterable[Source]) -> int:
    """The pages read in ``ledger`` (what ``max_sources`` bounds)."""
    return sum(1 for s in ledger if s["kind"] == "page")


def source_budget(state: Mapping[str, Any], max_sources: int) -> int:
    """Pages a run may read: its own budget, and as much again for each follow-up."""
    followups = len(state.get("followups") or []) + (1 if state.get("followup") else 0)
    return max_sources * (1 + followups)


def find(ledger: Sequence[Source], url: str) -> Source | None:
    key = url_key(url)
    return next((s for s in ledger if url_key(s["url"]) == key), None)


def source_list(
    ledger: Sequence[Source], numbers: Iterable[int] | None = None
) -> list[ResearchSource]:
    """The ledger's entries as the payload lists them (all, or just ``numbers``): with why
    each was read (:class:`Why`: the step that found it, its rank and rerank score)."""
    wanted = None if numbers is None else set(numbers)
    return [_listed(s) for s in ledger if wanted is None or s["n"] in wanted]


def _listed(source: Source) -> ResearchSource:
    why = source.get("why")
    listed = ResearchSource(
        n=source["n"],
        title=source["title"],
        url=source["url"],
        kind=source["kind"],
        read_at=source["read_at"],
        page=source.get("page"),
        found_by=why["found_by"] if why else source["step"],
        query=why["query"] if why else None,
        rank=why["rank"] if why else None,
        score=why["score"] if why else None,
    )
    if kept := source.get("kept"):  # read from the library: its kept copy too
        listed["kept_id"] = kept
        listed["kept_url"] = f"/library/{kept}"
    if meta := source.get("meta"):
        listed["meta"] = meta
    return listed


# --- state ------------------------------------------------------------------------------
# The state of one research run (thread = run id), checkpointed after every step.
#
# Steps are kept by id in ``steps`` (merged, so steps running side by side each write their
# own record; a ``None`` value deletes a step a replan replaced). Only ``execute`` writes the
# ledger, in step order, so source numbers do not depend on which step finished first.


def merge_steps(
    current: dict[str, StepRecord] | None, update: dict[str, StepRecord | None] | None
) -> dict[str, StepRecord]:
    """Each step's latest record by id; None drops a step (a replanned one)."""
    merged = dict(current or {})
    for key, value in (update or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


CallRecord = ResearchCall  # one tool call of a step, as the payload shows it


class StepRecord(TypedDict, total=False):
    id: str
    description: str
    tool: str  # any tool that only reads (research/_state.py), or compose
    args: dict[str, Any]  # as the planner (a model) or the person wrote them (JSON)
    requires: list[str]
    round: int
    status: str  # pending | done | failed | skipped
    error: str | None
    calls: list[CallRecord]
    found: list[Found]
    duration_s: float
    branch: str | None  # the sub-question it serves (None: compose)
    followup: int  # the follow-up question it was planned for (0: the run itself)


class Target(TypedDict):
    """A source a read step reads, and why (the search that found it, rank and score)."""

    url: str
    title: str
    why: NotRequired[Why | None]


class ReadyStep(TypedDict):
    """A step ``execute`` hands to ``run_step``, with the sources it reads."""

    step: StepRecord
    targets: list[Target]


class StepRun(ReadyStep):
    """What ``run_step`` is sent: a ready step, and the run it belongs to."""

    run_id: str
    started_at: float | None
    question: str
    owner: str


class ResearchState(TypedDict):
    question: str
    run_id: NotRequired[str]
    owner: NotRequired[str]  # whose run this is: memory is recalled as theirs
    started_at: NotRequired[float]
    max_rounds: NotRequired[int]
    trust_urls: NotRequired[bool]  # tools.approval: never: fetch any URL a plan names
    round: NotRequired[int]
    goal: NotRequired[str]
    plans: NotRequired[Annotated[list[PlanRecord], turn_list]]  # each plan and its origin
    steps: NotRequired[Annotated[dict[str, StepRecord], merge_steps]]
    order: NotRequired[list[str]]  # step ids in plan order
    last_step: NotRequired[int]  # the highest step number given (ids are never reused)
    ready: NotRequired[list[ReadyStep]]  # what execute hands to run_step next
    decision: NotRequired[str]
    forbidden: NotRequired[list[str]]  # call keys (plan.call_key) that failed for good
    handled: NotRequired[list[str]]  # failed steps already replanned around
    replans: NotRequired[int]
    schema_failed: NotRequired[
        str | None
    ]  # the model whose plan or gaps failed (research/_plan.py: gave_up)
    filed: NotRequired[list[str]]  # steps whose sources are in the ledger
    ledger: NotRequired[list[Source]]
    gaps: NotRequired[list[str]]
    rule_hop: NotRequired[int | None]  # the round after which the rule named the second hop
    rounds: NotRequired[Annotated[list[RoundRecord], turn_list]]
    draft: NotRequired[str]
    report: NotRequired[str]
    body: NotRequired[str]
    unsupported: NotRequired[list[UnsupportedSentence]]
    sources: NotRequired[list[ResearchSource]]
    citations: NotRequired[int]
    removed_links: NotRequired[list[str]]
    no_sources: NotRequired[NoSources | None]  # why no usable source was gathered (no report)
    event_log: NotRequired[Annotated[list[EventEntry], turn_list]]
    critique: NotRequired[Critique | None]
    grade_owed: NotRequired[bool]  # the critic gave way to the person's next question
    model: NotRequired[str]
    backend: NotRequired[str]
    error: NotRequired[str | None]
    # The person steers (docs/architecture.md, "Research"): what was asked for at the start,
    # what the run asked them, what they said while it ran, and follow-ups on its report.
    clarify: NotRequired[str]  # auto: the planner may ask one question first | never
    review: NotRequired[bool]  # pause before the first search with the plan
    # a plan the person gave at the start: their PlanEdit as JSON, validated again to plan
    given_plan: NotRequired[dict[str, Any] | None]
    clarify_request: NotRequired[ClarifyRequest | None]  # what the planner wants to ask
    clarification: NotRequired[Clarification | None]
    reviewed: NotRequired[bool]
    review_error: NotRequired[str | None]  # why the plan last sent was refused
    subquestions: NotRequired[list[SubQuestion]]
    notes: NotRequired[list[str]]  # the person's free text, for the planner and the report
    steer_seen: NotRequired[int]  # the last say of the run's inbox applied
    stopped: NotRequired[str | None]  # why the run stopped early (the person said so)
    followup: NotRequired[str | None]  # the follow-up question being answered
    followups: NotRequired[Annotated[list[Followup], turn_list]]
    # Where the run looks and what it keeps (docs/library.md), so a resume, an answer to a
    # pause or a follow-up, in this process or another, looks and keeps as the run began.
    looks_in: NotRequired[Sources]  # web | library | both
    # the sources searched, by name (web, library, arxiv, ...: docs/research.md "Sources"),
    # and the scope in time and place, as the run began
    looks_at: NotRequired[list[str]]
    scope: NotRequired[RunScope | None]
    keep: NotRequired[Keep | None]  # the run's own library.keep (None: the setting)


class ResearchUpdate(TypedDict, total=False):
    """What a research node returns: any of :class:`ResearchState`'s fields, as its reducer
    takes them (a per-run list may be :data:`~local2.graph.RESET`, alone or first; a step
    None drops it)."""

    question: str
    run_id: str
    owner: str
    started_at: float
    max_rounds: int
    trust_urls: bool
    round: int
    goal: str
    plans: Sequence[PlanRecord | str] | str
    steps: Mapping[str, StepRecord | None]
    order: list[str]
    last_step: int
    ready: list[ReadyStep]
    decision: str
    forbidden: list[str]
    handled: list[str]
    replans: int
    schema_failed: str | None
    filed: list[str]
    ledger: list[Source]
    gaps: list[str]
    rule_hop: int | None
    rounds: Sequence[RoundRecord | str] | str
    draft: str
    report: str
    body: str
    unsupported: list[UnsupportedSentence]
    sources: list[ResearchSource]
    citations: int
    removed_links: list[str]
    no_sources: NoSources | None
    event_log: Sequence[EventEntry | str] | str
    critique: Critique | None
    grade_owed: bool
    model: str
    backend: str
    error: str | None
    clarify: str
    review: bool
    given_plan: dict[str, Any] | None  # the person's PlanEdit as JSON (see ResearchState)
    clarify_request: ClarifyRequest | None
    clarification: Clarification | None
    reviewed: bool
    review_error: str | None
    subquestions: list[SubQuestion]
    notes: list[str]
    steer_seen: int
    stopped: str | None
    followup: str | None
    followups: Sequence[Followup | str] | str


# --- step_tools -------------------------------------------------------------------------
# Which tools a research step may call, and what each one is to the run.
#
# Any tool whose declared effects only read (``Tool.effects``, overridden by ``tools.read_only``
# and ``tools.side_effecting``) may serve as a step, except those ``research.exclude_tools``
# names (memory holds what the person said, not sources). Nothing here is specific to a tool's
# name: what the run needs is read off the tool's own metadata and JSON schema.
#
# - A **finder** lists sources without reading them: it takes a ``query`` and is a search
#   (``web_search``) or a listing (``evidence: listing``, as ``search_files``). A later step
#   may read "the top results" of a finder step (``from_step`` + ``top``).
# - A **reader** reads the one source an argument names, its **target**: the URL argument it
#   declares (``url_arg``: ``web_fetch``'s ``url``), or, for a tool that reads the person's
#   own data (``output: private``), its one required text argument (``read_file``'s ``path``,
#   a document tool's file). A reader of URLs reads what a web search found; a reader of files
#   reads what a listing of files found.
# - Any other read-only tool (a read-only MCP tool) is called with its arguments, and its whole
#   result is one source.
#
# A step's arguments are checked against its tool's own JSON schema (:meth:`StepTools.check`).

FROM_STEP = "from_step"  # a reader's pseudo-arguments: read the top results of that step
TOP = "top"
MAX_TOP = 5
# searches whose results are web pages: the web's, and each source's alone (search_arxiv...)
SEARCH_NAMES = frozenset({WEB_SEARCH, *(f"search_{n}" for n in SCHOLARLY_SOURCES)})
DEFAULT_EXCLUDED = ("recall_memory",)
_URL_ARGS = frozenset({"url", "uri", "href"})
_TEXT_TYPES = ("string",)


# What a reader of URLs reads: a web page, or a document of an offline corpus (corpus://,
# which web_search lists and web_fetch reads with no connection: local2.tools._corpus).
_URL = re.compile(r"(?:https?|corpus)://[^\s/]+", re.IGNORECASE)


def is_url(label: str) -> bool:
    return bool(_URL.match(label.strip()))


@dataclass(frozen=True)
class StepTool:
    """One tool as a research step sees it."""

    name: str
    description: str
    parameters: dict[str, Any]  # the tool's arguments as a JSON schema document
    finder: bool = False  # lists sources (hits) a reader can read
    finds_urls: bool = False  # a finder whose hits are web pages
    target: str | None = None  # a reader: the argument naming the source it reads
    takes_urls: bool = False  # a reader of URLs (web pages)
    output: str = "untrusted"

    @property
    def properties(self) -> dict[str, Any]:  # its JSON schema's properties
        props = self.parameters.get("properties")
        return dict(props) if isinstance(props, Mapping) else {}

    @property
    def required(self) -> list[str]:
        req = self.parameters.get("required")
        return [str(r) for r in req] if isinstance(req, list) else []

    def can_read(self, label: str) -> bool:
        """Whether this reader can read a source a finder found under ``label``."""
        return self.target is not None and is_url(label) == self.takes_urls

    def label(self, args: Mapping[str, Any]) -> str:
        """The name of the source a call reads: its target, else the call itself."""
        if self.target and isinstance(args.get(self.target), str):
            return str(args[self.target]).strip()
        shown = ", ".join(f"{k}={v}" for k, v in sorted(args.items()) if v not in (None, ""))
        return f"{self.name}({shown})"


def _target(tool: Tool) -> str | None:
    """The argument naming the source a reader reads: the URL it requests, or the one text
    argument of a tool that reads the person's own files and documents."""
    if tool.url_arg:
        return tool.url_arg
    if tool.output != "private":
        return None
    props = tool.parameters.get("properties") or {}
    required = [str(r) for r in tool.parameters.get("required") or []]
    texts = [
        r
        for r in required
        if r != "query" and (props.get(r) or {}).get("type", "string") in _TEXT_TYPES
    ]
    return texts[0] if len(texts) == 1 else None


def step_tool(tool: Tool) -> StepTool:
    """What ``tool`` is to a research step (see the module docstring)."""
    props = tool.parameters.get("properties") or {}
    searches = "query" in props and (tool.name in SEARCH_NAMES or tool.evidence == "listing")
    target = None if searches else _target(tool)
    return StepTool(
        name=tool.name,
        description=tool.description,
        parameters=dict(tool.parameters),
        finder=searches,
        finds_urls=searches and (tool.name in SEARCH_NAMES or tool.output == "untrusted"),
        target=target,
        takes_urls=target is not None and (tool.url_arg is not None or target in _URL_ARGS),
        output=tool.output,
    )


def reads_only(tool: Tool, settings: ToolsSettings | None) -> bool:
    """Declared to read without writing (config may say otherwise, by name)."""
    if settings is not None:
        if tool.name in settings.side_effecting:
            return False
        if tool.name in settings.read_only:
            return True
    return tool.effects == "read"


@dataclass(frozen=True)
class StepTools:
    """The tools a run's steps may call, in the order they are offered."""

    tools: dict[str, StepTool] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        tools: Iterable[Tool],
        settings: ToolsSettings | None = None,
        exclude: Sequence[str] = DEFAULT_EXCLUDED,
    ) -> StepTools:
        kept = [t for t in tools if reads_only(t, settings) and t.name not in exclude]
        return cls({t.name: step_tool(t) for t in kept})

    def names(self) -> list[str]:
        return list(self.tools)

    def get(self, name: str) -> StepTool | None:
        return self.tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def finders(self) -> list[StepTool]:
        return [t for t in self.tools.values() if t.finder]

    def search(self) -> StepTool | None:
        """The finder a plan made without the model searches with (the web's first)."""
        finders = self.finders()
        return next((t for t in finders if t.finds_urls), finders[0] if finders else None)

    def reader_for(self, finder: StepTool) -> StepTool | None:
        """The reader that reads what ``finder`` finds."""
        return next(
            (
                t
                for t in self.tools.values()
                if t.target is not None and t.takes_urls == finder.finds_urls
            ),
            None,
        )

    def args_schema(self, text_chars: int, url_chars: int) -> dict[str, Any]:  # JSON schema
        """The ``args`` object a plan is requested with: every tool's arguments (bounded, so
        a small model's reply stays short) and a reader's ``from_step`` / ``top``."""
        props: dict[str, Any] = {}  # JSON schema properties
        for tool in self.tools.values():
            for name, spec in tool.properties.items():
                if name in props or name in (FROM_STEP, TOP) or not isinstance(spec, Mapping):
                    continue
                kind = spec.get("type", "string")
                if kind == "string":
                    limit = url_chars if name in _URL_ARGS or name == tool.target else text_chars
                    props[name] = {"type": "string", "maxLength": limit}
                elif kind in ("integer", "number", "boolean"):
                    props[name] = {"type": kind}
        if any(t.target for t in self.tools.values()) and self.finders():
            props[FROM_STEP] = {"type": "string", "maxLength": 8}
            props[TOP] = {"type": "integer", "enum": list(range(1, MAX_TOP + 1))}
        return {"type": "object", "properties": props, "additionalProperties": False}

    def check(self, tool_name: str, args: Mapping[str, Any]) -> list[str]:
        """What is wrong with ``args`` for ``tool_name``, against the tool's own JSON schema
        (a reader's target may come from ``from_step`` instead)."""
        import jsonschema  # lazy: jsonschema, attr: ~62 ms, 39 modules at import

        tool = self.tools.get(tool_name)
        if tool is None:
            return [f"unknown tool {tool_name!r}"]
        own = {k: v for k, v in args.items() if k not in (FROM_STEP, TOP)}
        if FROM_STEP in args and not tool.target:
            return [f"{tool_name} reads no results of another step: it takes no args.from_step"]
        props = tool.properties
        unknown = [k for k in own if k not in props]
        if unknown:
            takes = ", ".join(props) or "no arguments"
            return [f"a {tool_name} step takes no args.{unknown[0]} (it takes: {takes})"]
        schema = dict(tool.parameters)
        if FROM_STEP in args:  # the target comes from the step it reads
            schema["required"] = [r for r in tool.required if r != tool.target]
        missing = [r for r in schema.get("required") or [] if own.get(r) in (None, "")]
        if missing:
            return [f"a {tool_name} step needs args.{missing[0]}"]
        validator = jsonschema.Draft202012Validator(schema)
        errors = [
            f"args.{'.'.join(map(str, e.absolute_path)) or '(all)'}: {e.message}"[:200]
            for e in validator.iter_errors(own)
        ]
        if errors:
            return errors[:3]
        if tool.takes_urls and tool.target in own:
            value = str(own[tool.target]).strip()
            if not is_url(value):
                return [f"args.{tool.target} {value!r} is not an http(s) URL (or a corpus:// one)"]
        return []


_MADE: dict[int, tuple[object, object, StepTools]] = {}  # by id of the tools: the last few


def step_catalog(services: Services) -> StepTools:
    """The tools of ``services`` a step may call (see the module docstring); worked out
    once for a set of tools and settings (every step boundary asks)."""
    settings = services.settings
    made = _MADE.get(id(services.tools))
    if made is not None and made[0] is services.tools and made[1] is settings:
        return made[2]
    catalog = StepTools.of(services.tools.values(), settings.tools, settings.research.exclude_tools)
    if len(_MADE) > 64:
        _MADE.clear()
    _MADE[id(services.tools)] = (services.tools, settings, catalog)
    return catalog
