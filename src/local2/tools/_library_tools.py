"""The library as tools: ``search_library`` (read-only), and research's sources from it.

With ``research --sources library`` a run's ``web_search`` and ``web_fetch`` are served by
the person's library alone (:class:`LibrarySearch`, :class:`LibraryFetch`): no connection
is opened, a URL not kept is refused. With ``both`` the library is searched first and the
web for what it lacks, each hit marked by where it came from; a URL kept is read from the
kept copy, any other from the web. The result texts keep the web tools' shapes, so the
ledger numbers and cites them as it does pages, under their original URLs; each read names
its kept copy. Kept text is outside content like any page (the tools' output: untrusted).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from local2.config import Settings, ToolSchema
from local2.contracts import SEARCH_LIBRARY, WEB_FETCH, WEB_SEARCH, LibraryEntry, LibraryHit
from local2.documents import document_note, render_passages
from local2.errors import ToolError
from local2.library import Reader, ReadingLibrary, as_document
from local2.retrieval import pick_passages
from local2.tools._base import (
    Tool,
    ToolContext,
    ToolFn,
    ToolResult,
    as_result,
    configured_tool,
    declare,
)
from local2.tools._passages import focus
from local2.tools._search import WEB_SEARCH_TOOL, SearchHit, format_hits
from local2.tools._web import context_tokens
from local2.tools._web_fetch import RESULT_HEAD, WEB_FETCH_TOOL, question_for

# What the model is told about it: written here only (generator.tools may tune it).
SEARCH_LIBRARY_TOOL = declare(
    ToolSchema(
        name=SEARCH_LIBRARY,
        description=(
            "Search the person's library: the pages and documents read in earlier research "
            "runs (and chats), kept as they were read. Returns titles, passages, pages and "
            "URLs, each with when it was read."
        ),
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for"},
                "max_results": {"type": "integer", "description": "Most passages to return"},
            },
            "required": ["query"],
        },
    )
)


FROM_LIBRARY = "from your library"
# A run that reads only the library, searching an empty one: said so, for the person's next step
LIBRARY_EMPTY = "Your library is empty"
NOT_KEPT = (
    "fetch error: {url} is not in your library, and this run reads only the library "
    "(research --sources library): read a URL from search results"
)


def _day(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).date().isoformat()


def _query(args: Mapping[str, Any]) -> str:
    query = args.get("query") if isinstance(args, Mapping) else None
    if not isinstance(query, str) or not query.strip():
        raise ToolError("missing query argument")
    return " ".join(query.split())


def hit_line(hit: LibraryHit) -> SearchHit:
    """A library hit as a web search hit, marked as the library's."""
    runs = f" by run {', '.join(hit['runs'][-2:])}" if hit["runs"] else ""
    page = f", page {hit['page']}" if hit["page"] else ""
    note = f"({FROM_LIBRARY}{page}, read {_day(hit['read_at'])}{runs})"
    return SearchHit(title=f"{hit['title']} {note}", url=hit["path"], snippet=hit["passage"])


class SearchLibrary:
    """``search_library``: the passages of the person's library that answer a query."""

    def __init__(self, library: ReadingLibrary) -> None:
        self.library = library

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        query = _query(args)
        k = args.get("max_results") if isinstance(args.get("max_results"), int) else None
        hits = self.library.search(ctx.owner, query, k or ctx.max_results)
        if not hits:
            return ToolResult(text=f"Nothing in your library for: {query}", data={"hits": []})
        text = format_hits([hit_line(h) for h in hits], dt.date.today())
        return ToolResult(text=text, data={"hits": hits})


class LibrarySearch:
    """``web_search`` of a run from the library (``web``: the web for what it lacks)."""

    def __init__(self, library: ReadingLibrary, web: ToolFn | None, k: int) -> None:
        self.library, self.web, self.k = library, web, k

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        query = _query(args)
        wanted = ctx.max_results or self.k
        found = [hit_line(h) for h in self.library.search(ctx.owner, query, wanted)]
        data: dict[str, Any] = {"provider": "library", "library": len(found)}  # ToolResult.data
        if self.web is not None and len(found) < wanted:  # the web for what the library lacks
            known = {h.url.split("#", 1)[0] for h in found}
            web = as_result(self.web(args, ctx))
            more = [h for h in _web_hits(web.text) if h.url.split("#", 1)[0] not in known]
            found += [SearchHit(f"{h.title} (from the web)", h.url, h.snippet) for h in more]
            data.update(provider="library+web", web=len(more))
        found = found[:wanted]
        data.update(count=len(found), urls=[h.url for h in found])
        if not found and self.web is None and not self.library.entries(ctx.owner):
            return ToolResult(text=f"{LIBRARY_EMPTY}: there is nothing in it to search", data=data)
        if not found:
            return ToolResult(text=f"No results found for: {query}", data=data)
        return ToolResult(text=format_hits(found, dt.date.today()), data=data)


_HIT = re.compile(
    r"^\[\d+\] Title: (?P<title>.*)\nSnippet: (?P<snippet>.*)\nURL: (?P<url>.*)$", re.M
)


def _web_hits(text: str) -> list[SearchHit]:
    return [SearchHit(m["title"], m["url"].strip(), m["snippet"]) for m in _HIT.finditer(text)]


class LibraryFetch:
    """``web_fetch`` of a run from the library: a kept URL from its kept copy (a reading of
    it by the run, unless the run keeps nothing); another from ``web``, or refused when the
    run reads the library only."""

    def __init__(self, library: ReadingLibrary, web: ToolFn | None, budget_chars: int) -> None:
        self.library, self.web, self.budget = library, web, budget_chars

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext) -> str | ToolResult:
        url = args.get("url") if isinstance(args, Mapping) else None
        if not isinstance(url, str) or not url.strip():
            raise ToolError("missing url argument")
        url = url.strip()
        entry = self.library.by_url(ctx.owner, url)
        if entry is None:
            if self.web is None:
                raise ToolError(NOT_KEPT.format(url=url))
            return self.web(args, ctx)
        if self.library.keep_mode(ctx.session_id) != "off":  # kept off: no trace of the read
            reader = Reader("research", run_id=ctx.session_id, owner=ctx.owner)
            self.library.read_again(ctx.owner, entry["id"], reader)
        text = self._text(ctx, entry, url, question_for(args, ctx))
        data = {"url": url, "library": entry["id"], "kept_at": entry["first_read"]}
        return ToolResult(text=f"URL: {entry['url']}{RESULT_HEAD}{text}", data=data)

    def _text(self, ctx: ToolContext, entry: LibraryEntry, url: str, question: str) -> str:
        kept = f"[Kept copy {entry['id']} in your library, read {_day(entry['first_read'])}]"
        pages = self.library.pages_of(ctx.owner, entry["id"])
        if entry["pages"] <= 1 and entry["format"] in ("html", "text"):
            return f"{kept}\n{focus(pages[0][1], question, self.budget).text}"
        doc = as_document(entry["format"], entry["title"], pages)
        wanted = re.search(r"#page=(\d+)$", url)
        if wanted:  # the page asked for
            number = int(wanted.group(1))
            doc = as_document(
                entry["format"], entry["title"], tuple(p for p in pages if p[0] == number) or pages
            )
        note = document_note(doc, entry["url"])
        passages = pick_passages(doc, question, max(self.budget - len(note) - len(kept), 200))
        return f"{kept}\n{note}\n{render_passages(passages, doc.unit)}"


def library_tool(settings: Settings, library: ReadingLibrary | None = None) -> Tool:
    """``search_library``: read-only; what it returns was read from outside (untrusted)."""
    found = SearchLibrary(library or ReadingLibrary.shared(settings))
    return configured_tool(settings, SEARCH_LIBRARY_TOOL, found, effects="read", output="untrusted")


def library_sourced(
    tools: dict[str, Tool],
    settings: Settings,
    backend: str | None,
    library: ReadingLibrary,
    sources: str,
) -> dict[str, Tool]:
    """A run's tools with ``web_search`` and ``web_fetch`` served from the library
    (``sources``: ``library``, no network at all, every other outside tool left out;
    ``both``, the library first and the web for what it lacks)."""
    both = sources == "both"
    fetch_cfg = settings.web.fetch
    budget = fetch_cfg.max_chars or int(
        context_tokens(settings, backend) * fetch_cfg.context_share * 3.0
    )
    search, fetch = tools.get(WEB_SEARCH), tools.get(WEB_FETCH)
    kept = {n: t for n, t in tools.items() if both or t.output != "untrusted"}
    web_search = search.run if both and search is not None else None
    web_fetch = fetch.run if both and fetch is not None else None
    k = settings.library.search_k
    kept[WEB_SEARCH] = dataclasses.replace(
        search or _web_tool(settings, WEB_SEARCH_TOOL), run=LibrarySearch(library, web_search, k)
    )
    kept[WEB_FETCH] = dataclasses.replace(
        fetch or _web_tool(settings, WEB_FETCH_TOOL, "url"),
        run=LibraryFetch(library, web_fetch, budget),
    )
    return kept


def _web_tool(settings: Settings, declared: ToolSchema, url_arg: str | None = None) -> Tool:
    """A web tool the run's services lack (disabled), to be served from the library."""

    def unused(args: Mapping[str, Any], ctx: ToolContext) -> str:
        raise ToolError(f"{declared.name} is off")

    return configured_tool(
        settings, declared, unused, effects="read", output="untrusted", url_arg=url_arg
    )
