"""The evidence ledger: every source a run found or read, under a stable number.

A search result enters as a ``result`` (its snippet is its text); reading its page later
upgrades the same entry to a ``page`` with the page text, keeping its number. Numbers are
given in the order sources arrive and never change, so ``[n]`` means the same source from
the first round to the report. The references list is built from here and nowhere else.

``max_sources`` bounds the pages read; results found and not read are bounded by how many
of each search's best are filed (``file_results``): a snippet costs the model a line, and a
result ranked but not read still counts (shown, and cited, as the snippet it is).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict
from urllib.parse import urlsplit, urlunsplit

from local2.contracts import ResearchSource

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
    """The hits in a ``web_search`` result text (``tools.web_search.format_hits``)."""
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
        entries.append(source)
        by_url[key] = source
        touched.append(source["n"])
    return entries, touched


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
    return listed
