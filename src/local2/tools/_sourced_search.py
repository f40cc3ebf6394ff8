"""``web_search`` of a run told where to look (``--sources web,arxiv,pubmed,library``) and
within what scope (``--since/--until/--domains/--exclude-domains``).

Each chosen source is asked in turn: the run's own web search (its engines, with the
domains pushed as ``site:`` operators, the one filter every engine reads), the library, and
the scholarly providers (each pushes the scope into its own API's filter where it has one).
The scope is then applied to every hit (:func:`local2.tools._scholarly.apply_scope`), so a hit
outside it never reaches the model; an undated hit is kept and counted. A run may give its
first round a narrower scope (``first_round``: a watch's run looks first at what appeared
since its last one); a step of a later round searches within the run's own scope. The hits are
interleaved source by source (the run reranks them after), and the result text keeps
``web_search``'s shape, so the ledger numbers and cites them as it does web hits; each hit's
bibliographic record goes in the result's data (``records``, by URL) for the ledger.

With Crossref among the sources, every hit with a DOI is checked against its retraction data
(Retraction Watch's), so a retracted paper found on arXiv is marked too.

A source that fails (a 429 or 5xx retried once, a malformed answer, no key) is left out with
a notice in the result's data, and the others answer: the search fails only when all do.
An open-access paper is listed under its PDF, so the run reads it with the documents reader
and cites it by page.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from math import ceil
from typing import Any

from local2.config import Settings
from local2.contracts import SourceKind, SourceMeta
from local2.errors import ToolError
from local2.library import ReadingLibrary
from local2.tools._base import Tool, ToolContext, ToolFn, ToolResult, as_result, configured_tool
from local2.tools._library_tools import LibrarySearch, library_sourced
from local2.tools._scholarly import (
    CrossrefProvider,
    PagedProvider,
    ScholarlyHit,
    Scope,
    apply_scope,
    date_span,
    from_web_hit,
    outside_window,
    scholarly_provider,
)
from local2.tools._search import SearchHit, format_hits, searching_within

_HIT = re.compile(
    r"^\[\d+\] Title: (?P<title>.*)\nSnippet: (?P<snippet>.*)\nURL: (?P<url>.*)$", re.M
)
DEFAULT_K = 10


def listed_hits(text: str) -> list[SearchHit]:
    """The hits of a ``web_search``-shaped result text."""
    return [SearchHit(m["title"], m["url"].strip(), m["snippet"]) for m in _HIT.finditer(text)]


def with_sites(query: str, scope: Scope) -> str:
    """``query`` with the scope's domains as ``site:`` / ``-site:`` operators (what a general
    web engine reads of a domain filter)."""
    sites = " OR ".join(f"site:{d}" for d in scope.domains)
    unwanted = " ".join(f"-site:{d}" for d in scope.exclude_domains)
    return " ".join(
        p for p in (query, f"({sites})" if len(scope.domains) > 1 else sites, unwanted) if p
    )


def listed_url(hit: ScholarlyHit) -> str:
    """Where the run reads a hit: an open-access paper's PDF (read page by page), else the
    hit's own address."""
    if hit.pdf_url and hit.open_access and hit.pdf_url.startswith(("http://", "https://")):
        return hit.pdf_url
    return hit.url


@dataclass
class Asked:
    """What one source gave: its hits in scope, what the scope dropped, its notices."""

    source: str
    hits: list[ScholarlyHit] = field(default_factory=list)
    dropped: int = 0
    undated: int = 0
    notices: list[str] = field(default_factory=list)
    failed: str | None = None


def interleave(answers: Sequence[Asked], wanted: int) -> list[ScholarlyHit]:
    """The sources' hits one of each in turn (each source's best first), each URL once."""
    out: list[ScholarlyHit] = []
    seen: set[str] = set()
    queues = [list(a.hits) for a in answers]
    while any(queues) and len(out) < wanted:
        for queue in queues:
            if not queue:
                continue
            hit = queue.pop(0)
            url = listed_url(hit)
            if url not in seen:
                seen.add(url)
                out.append(hit)
    return out[:wanted]


class SourcedSearch:
    """``web_search`` over the run's chosen sources within its scope (module docstring)."""

    def __init__(
        self,
        scope: Scope,
        *,
        web: ToolFn | None = None,
        library: ToolFn | None = None,
        providers: Sequence[PagedProvider] = (),
        today: Callable[[], dt.date] = dt.date.today,
        k: int = DEFAULT_K,
        first_round: Scope | None = None,
    ) -> None:
        self.scope, self.web, self.library = scope, web, library
        self.first_round = first_round
        self.providers = list(providers)
        self.today = today
        self.k = k  # the hits a search gives when its call names no number

    def scope_for(self, ctx: ToolContext) -> Scope:
        """The scope of the step asking: the first round's when it has one of its own."""
        if self.first_round is not None and (ctx.round or 1) <= 1:
            return self.first_round
        return self.scope

    def names(self) -> list[str]:
        """The sources asked, in order."""
        own = [n for n, f in (("web", self.web), ("library", self.library)) if f is not None]
        return own + [p.name for p in self.providers]

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        query = args.get("query") if isinstance(args, Mapping) else None
        if not isinstance(query, str) or not query.strip():
            raise ToolError("missing query argument")
        query = " ".join(query.split())
        scope = self.scope_for(ctx)
        wanted = ctx.max_results or self.k
        share = max(3, ceil(wanted / max(1, len(self.names()))))
        answers: list[Asked] = []
        if self.web is not None:  # the engines push what they can of the scope (web_scope)
            with searching_within(scope):
                answers.append(self._own("web", self.web, with_sites(query, scope), ctx, scope))
        if self.library is not None:
            answers.append(self._own("library", self.library, query, ctx, scope, "document"))
        if self.providers:  # side by side: each API has its own pause (the client's gate)
            with ThreadPoolExecutor(len(self.providers), thread_name_prefix="local2-src") as pool:
                answers += list(
                    pool.map(lambda p: self._scholarly(p, query, share, scope), self.providers)
                )
        hits = self._retractions(interleave(answers, wanted), answers)
        data = self._data(answers, hits, scope)
        if not hits and all(a.failed for a in answers):
            failed = "; ".join(f"{a.source}: {a.failed}" for a in answers)
            raise ToolError(f"search error: every source failed ({failed})"[:600])
        if not hits:
            return ToolResult(text=f"No results found for: {query}", data=data)
        listed = [SearchHit(h.title, listed_url(h), h.snippet) for h in hits]
        return ToolResult(text=format_hits(listed, self.today()), data=data)

    def _retractions(self, hits: list[ScholarlyHit], answers: list[Asked]) -> list[ScholarlyHit]:
        """With Crossref among the sources, the works it knows by DOI marked retracted
        where their own source did not say (arXiv and Semantic Scholar publish no
        retraction); a failed lookup leaves them as they were, said in a notice."""
        crossref = next((p for p in self.providers if isinstance(p, CrossrefProvider)), None)
        if crossref is None or crossref.notice():
            return hits
        try:
            return crossref.mark_retractions(hits)
        except ToolError as exc:
            answers[-1].notices.append(f"{crossref.label}: retractions not checked: {exc}")
            return hits

    def _own(
        self,
        name: str,
        tool: ToolFn,
        query: str,
        ctx: ToolContext,
        scope: Scope,
        kind: SourceKind = "web",
    ) -> Asked:
        """The web search's or the library's hits, the scope applied to them."""
        asked = Asked(name)
        try:
            result = as_result(tool({"query": query}, ctx))
        except ToolError as exc:
            asked.failed = str(exc)[:300]
            asked.notices.append(f"{name}: {asked.failed}")
            return asked
        provider = str(result.data.get("provider") or name)
        scoped = apply_scope(
            [from_web_hit(h, provider, kind) for h in listed_hits(result.text)], scope
        )
        asked.hits = [h for h in scoped.kept if isinstance(h, ScholarlyHit)]
        asked.dropped, asked.undated = len(scoped.dropped), scoped.undated
        return asked

    def _scholarly(self, provider: PagedProvider, query: str, share: int, scope: Scope) -> Asked:
        asked = Asked(provider.name)
        left_out = provider.notice()
        if left_out:
            asked.failed = left_out
            asked.notices.append(left_out)
            return asked
        try:
            found = provider.find(query, share, scope)
        except ToolError as exc:
            asked.failed = str(exc)[:300]
            asked.notices.append(f"{provider.label}: {asked.failed} (the run goes on without it)")
            return asked
        asked.hits, asked.dropped, asked.undated = found.hits, len(found.dropped), found.undated
        asked.notices += found.notices
        return asked

    # ToolResult.data: JSON for the payload
    def _data(
        self, answers: Sequence[Asked], hits: Sequence[ScholarlyHit], scope: Scope
    ) -> dict[str, Any]:  # ToolResult.data: JSON for the payload
        """The result's account (``ToolResult.data``, JSON): the record of each hit by the
        URL it is listed under, each source's count, what the scope dropped, the notices."""
        records: dict[str, SourceMeta] = {listed_url(h): h.meta() for h in hits}
        return {
            "provider": "+".join(a.source for a in answers),
            "count": len(hits),
            "urls": list(records),
            "records": records,
            "by_source": {a.source: len(a.hits) for a in answers},
            "dropped": sum(a.dropped for a in answers),
            "undated": sum(1 for h in hits if scope.timed and date_span(h.published) is None),
            "notices": [n for a in answers for n in a.notices],
        }


def dated_outside(published: str | None, scope: Scope) -> str | None:
    """Why a page its own metadata dates ``published`` is outside ``scope``'s window, in
    words, or ``None`` (inside, or undated: nothing dates it outside)."""
    why = outside_window(published, scope)
    return f"the page says it was {why}" if why else None


OUT_OF_SCOPE = "out of scope"  # how a page left out for its date begins, in the event log


class ScopedFetch:
    """``web_fetch`` within a run's window: a page whose own metadata (its ``published``:
    ``article:published_time``, ``citation_date``, JSON-LD ``datePublished``...) dates it
    outside ``since``/``until`` is not given to the model; the call fails with why (the
    event log and the step's record say it was left out as out of scope). An undated page
    is given as read."""

    def __init__(self, fetch: ToolFn, scope: Scope) -> None:
        self.fetch, self.scope = fetch, scope

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        result = as_result(self.fetch(args, ctx))
        published = result.data.get("published") if isinstance(result.data, dict) else None
        why = dated_outside(published if isinstance(published, str) else None, self.scope)
        if why is None:
            return result
        url = str(result.data.get("final_url") or result.data.get("url") or args.get("url"))
        raise ToolError(
            f"{OUT_OF_SCOPE}: {why}, outside the run's window; left out: {url}",
            data={"out_of_scope": True, "published": published, "url": url},
            fix="Widen --since/--until, or leave the page out.",
        )


def sourced_tools(
    tools: dict[str, Tool],
    settings: Settings,
    backend: str | None,
    library: ReadingLibrary,
    names: Sequence[str],
    scope: Scope,
    *,
    k: int = DEFAULT_K,
    each_source: bool = True,
    first_round: Scope | None = None,
) -> dict[str, Tool]:
    """A run's tools with ``web_search`` asking the sources ``names`` within ``scope``
    (``k`` hits when a call names no number; the first round's steps within
    ``first_round``, when it is given).

    ``web_fetch`` stays the web's (it reads the papers' PDFs and pages), the library's for a
    kept URL when the library is a source; with the library alone no tool that reaches
    outside is left (:func:`~local2.tools._library_tools.library_sourced`). A page
    ``web_fetch`` reads whose own metadata dates it outside the scope's window is left out
    (:class:`ScopedFetch`). ``each_source``: with more than one scholarly source, also a
    ``search_<source>`` tool for each (a chat turn does without: its one ``web_search``)."""
    outside = [n for n in names if n != "library"]
    original = tools.get("web_search")
    web = original.run if "web" in names and original is not None else None
    if "library" in names:
        tools = library_sourced(tools, settings, backend, library, "both" if outside else "library")
    search = tools.get("web_search")
    lib = LibrarySearch(library, None, settings.library.search_k) if "library" in names else None
    providers = [scholarly_provider(n, settings.scholarly) for n in outside if n != "web"]
    run = SourcedSearch(
        scope, web=web, library=lib, providers=providers, k=k, first_round=first_round
    )
    base = search.timeout_s if search is not None and search.timeout_s else None
    base = base or settings.generator.tool_timeout_s
    # each API: a call, its one retry after at most max_backoff_s, and its pause
    slowest = max(
        (
            2 * getattr(settings.scholarly, p.name).timeout_s
            + settings.scholarly.max_backoff_s
            + getattr(settings.scholarly, p.name).min_interval_s
            for p in providers
        ),
        default=0.0,
    )
    made = search or configured_tool(
        settings, "web_search", run, effects="read", output="untrusted"
    )
    own = {
        source_search_name(p.name): source_tool(p, scope, base + slowest, first_round)
        for p in providers
    }
    if len(providers) < 2 or not each_source:
        own = {}  # one source: web_search is that source already
    fetch = tools.get("web_fetch")
    if fetch is not None and scope.timed:
        tools = {
            **tools,
            "web_fetch": dataclasses.replace(fetch, run=ScopedFetch(fetch.run, scope)),
        }
    return {
        **tools,
        **own,
        "web_search": dataclasses.replace(made, run=run, timeout_s=base + slowest),
    }


def source_search_name(source: str) -> str:
    """The tool that searches one source alone: ``search_arxiv``, ``search_pubmed``..."""
    return f"search_{source}"


KINDS = {
    "arxiv": "preprints in physics, mathematics, computer science and biology",
    "pubmed": "biomedical and life-science papers",
    "semantic_scholar": "papers of every field, with citation counts",
    "openalex": "papers of every field, with open-access links",
    "crossref": "the DOI records of published works",
    "wikipedia": "encyclopedia articles",
}


def source_tool(
    provider: PagedProvider, scope: Scope, timeout_s: float, first_round: Scope | None = None
) -> Tool:
    """A search of ``provider`` alone, so a plan may send a sub-question to one source (a
    person's edit of the plan may change it); ``web_search`` asks them all."""
    what = KINDS.get(provider.name, "works")
    return Tool(
        source_search_name(provider.name),
        f"Search {provider.label} alone ({what}), within the run's scope; "
        "returns titles, snippets and URLs, each with its record.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to search for."}},
            "required": ["query"],
        },
        SourcedSearch(scope, providers=[provider], first_round=first_round),
        timeout_s=timeout_s,
        effects="read",
        output="untrusted",
    )
