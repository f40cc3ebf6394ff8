"""What every scholarly provider is: a name, a label, ``find(query, max_results, scope)``
paging through its API, and the scope pushed where its API has a filter.

A provider writes only :meth:`PagedProvider.page` (one call of its API: the hits of one
page, the total and where the next page starts) and says what of a scope it pushes
(:attr:`PagedProvider.pushes`); paging, de-duplication and the scope applied to the hits are
here, once. ``search(query, max_results)`` makes each one a web search provider too
(``tools/_search.py: SearchProvider``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from lxml import etree

from local2.errors import ToolError
from local2.tools._scholarly.client import Answer, ApiClient, Malformed
from local2.tools._scholarly.hit import ScholarlyHit, date_span
from local2.tools._scholarly.scope import Pushed, Scope, apply_scope
from local2.tools._search import SearchHit

# No entities, no network, no huge trees: an API's XML is data from outside.
MAX_PAGES = 5  # calls a find makes at most (arXiv's pause makes each one three seconds)
_XML = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


@dataclass(frozen=True)
class Page:
    """One call's hits, the total the API reports (``None``: not said), and the offset the
    next page starts at (``None``: this was the last)."""

    hits: list[ScholarlyHit]
    total: int | None
    next_offset: int | None


@dataclass
class Found:
    """A provider's answer to ``find``: the hits in scope, what its API applied of the scope
    (``pushed``), what the scope dropped and why, how many kept are undated, and what the
    run should say (a retry, a page that failed after the first)."""

    source: str
    hits: list[ScholarlyHit]
    pushed: Pushed
    total: int | None = None
    dropped: list[tuple[SearchHit, str]] = field(default_factory=list)
    undated: int = 0
    notices: list[str] = field(default_factory=list)


class ScholarlyProvider(Protocol):
    """A source of typed hits (``--sources`` names it)."""

    name: str
    label: str

    def find(self, query: str, max_results: int, scope: Scope | None = None) -> Found: ...

    def search(self, query: str, max_results: int) -> list[SearchHit]: ...

    def notice(self) -> str | None: ...


def json_body(answer: Answer) -> Any:
    """The answer's JSON (``ValueError`` for a body that is not)."""
    return json.loads(answer.body)


# an API's JSON, not checked yet
def json_object(answer: Answer, *keys: str) -> dict[str, Any]:
    """The answer's JSON object, which must hold ``keys`` (else :class:`Malformed`)."""
    data = json_body(answer)
    if not isinstance(data, dict):
        raise Malformed("not a JSON object")
    missing = [k for k in keys if k not in data]
    if missing:
        raise Malformed(f"no {', '.join(missing)}")
    return data


def xml_root(answer: Answer) -> etree._Element:
    """The answer's XML root element (:class:`Malformed` for a body that is not XML)."""
    try:
        return etree.fromstring(answer.body, _XML)
    except etree.XMLSyntaxError as exc:
        raise Malformed(f"not XML: {exc}") from None


# an API's JSON, not checked yet
def as_dict(value: Any) -> dict[str, Any]:
    """A nested JSON object, or ``{}`` where the API sent null or another type."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A nested JSON array, or ``[]`` where the API sent null or another type."""
    return value if isinstance(value, list) else []


def text_of(node: etree._Element | None) -> str:
    """All the text under ``node``, its whitespace collapsed ("" for none)."""
    if node is None:
        return ""
    return " ".join("".join(node.itertext()).split())


class PagedProvider:
    """The paging loop every provider shares; a subclass writes :meth:`page`."""

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    pushes: ClassVar[Pushed] = Pushed()

    def __init__(self, client: ApiClient, page_size: int) -> None:
        self.client = client
        self.page_size = page_size

    def notice(self) -> str | None:
        """Why this provider is left out of a run (no key), or ``None`` when it may serve."""
        return None

    def page(self, query: str, scope: Scope, offset: int, size: int) -> tuple[Page, list[str]]:
        """One call: the hits from ``offset`` (``size`` of them at most), and the retries it
        took, in words."""
        raise NotImplementedError

    def find(self, query: str, max_results: int, scope: Scope | None = None) -> Found:
        """Up to ``max_results`` hits for ``query`` within ``scope``, page after page (at most
        :data:`MAX_PAGES`: a scope that drops most hits must not page through a whole
        index). A page that fails after the first ends the paging with what was found (said
        in ``notices``); the first one's failure is the call's."""
        scope = scope or Scope()
        query = " ".join(query.split())
        if not query:
            raise ToolError(
                "search error: the query is empty", fix="Give the search some words to look for."
            )
        size = max(1, min(self.page_size, max_results))
        found = Found(source=self.name, hits=[], pushed=self._pushed(scope))
        seen: set[str] = set()
        offset: int | None = 0
        for _ in range(MAX_PAGES):
            if offset is None or len(found.hits) >= max_results:
                break
            try:
                page, retried = self.page(query, scope, offset, size)
            except ToolError as exc:
                if not seen:
                    raise
                found.notices.append(f"{self.label}: stopped paging after {len(seen)} hits: {exc}")
                break
            found.notices += retried
            found.total = page.total if page.total is not None else found.total
            fresh = [h for h in page.hits if h.url not in seen]
            seen.update(h.url for h in fresh)
            self._keep(found, fresh, scope, max_results)
            offset = page.next_offset if page.hits else None
        return found

    def _pushed(self, scope: Scope) -> Pushed:
        return Pushed(
            time=self.pushes.time and scope.timed, domains=self.pushes.domains and scope.placed
        )

    @staticmethod
    def _keep(found: Found, hits: list[ScholarlyHit], scope: Scope, max_results: int) -> None:
        # one page's hits through the scope, into what was found (up to max_results kept)
        scoped = apply_scope(hits, scope)
        room = max_results - len(found.hits)
        kept = [h for h in scoped.kept if isinstance(h, ScholarlyHit)][: max(room, 0)]
        found.hits += kept
        found.dropped += scoped.dropped
        found.undated += sum(1 for h in kept if scope.timed and date_span(h.published) is None)

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        """As a web search provider: the hits, no scope."""
        return list(self.find(query, max_results).hits)


def next_offset(offset: int, got: int, total: int | None, limit: int | None = None) -> int | None:
    """Where the page after one of ``got`` hits from ``offset`` starts, or ``None`` at the
    end (no hits, the total reached, or the API's ``limit`` on offsets)."""
    after = offset + got
    if got == 0 or (total is not None and after >= total) or (limit is not None and after >= limit):
        return None
    return after
