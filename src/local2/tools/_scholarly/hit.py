"""A search hit that carries what a citation needs, and a provider's answer.

:class:`ScholarlyHit` *is* a :class:`~local2.tools._search.SearchHit` (title, URL,
snippet) with the bibliographic record its source published, so whatever takes a web hit
(``web_search``'s formatting, research's ledger, the reranker) takes it unchanged, and a web
hit maps into it (:func:`from_web_hit`) with every field unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from local2.contracts import SourceKind, SourceMeta
from local2.tools._search import SearchHit

_ISO = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


@dataclass(frozen=True)
class ScholarlyHit(SearchHit):
    """One hit with its record: ``published`` is ISO 8601 as precise as the source knows it
    (``2024``, ``2024-03``, ``2024-03-05``); ``None`` anywhere means not known."""

    provider: str = ""
    kind: SourceKind = "web"
    published: str | None = None
    authors: tuple[str, ...] = ()
    venue: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    pdf_url: str | None = None
    open_access: bool | None = None
    peer_reviewed: bool | None = None
    retracted: bool | None = None
    citations: int | None = None
    extra_urls: tuple[str, ...] = field(default=(), compare=False)  # landing pages, mirrors

    def meta(self) -> SourceMeta:
        """The record as the ledger and the payload keep it (JSON)."""
        return SourceMeta(
            kind=self.kind,
            provider=self.provider,
            published=self.published,
            authors=list(self.authors),
            venue=self.venue,
            doi=self.doi,
            arxiv_id=self.arxiv_id,
            pmid=self.pmid,
            pmcid=self.pmcid,
            pdf_url=self.pdf_url,
            open_access=self.open_access,
            peer_reviewed=self.peer_reviewed,
            retracted=self.retracted,
            citations=self.citations,
        )

    def urls(self) -> tuple[str, ...]:
        """Every address the work is at (a domain filter matches any of them)."""
        found = (self.url, self.pdf_url or "", *self.extra_urls)
        return tuple(dict.fromkeys(u for u in found if u))


def from_web_hit(hit: SearchHit, provider: str, kind: SourceKind = "web") -> ScholarlyHit:
    """A general web engine's hit as a scholarly one: its kind and finder known, the rest
    not (shown "undated")."""
    if isinstance(hit, ScholarlyHit):
        return hit
    return ScholarlyHit(
        title=hit.title, url=hit.url, snippet=hit.snippet, provider=provider, kind=kind
    )


def iso_date(value: str | None) -> str | None:
    """``2024-03-05T10:00:00Z``, ``2024/03/05``, ``2024-3-5`` as ``2024-03-05`` (as precise as
    given); anything that does not start with a year, ``None``."""
    if not value:
        return None
    text = value.strip().replace("/", "-")
    parts = re.match(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?", text)
    if not parts:
        return None
    year, month, day = parts.groups()
    return date_parts([int(year), *(int(p) for p in (month, day) if p)])


def date_parts(parts: list[int]) -> str | None:
    """``[2024, 3, 5]`` (Crossref's and CSL's ``date-parts``) as ``2024-03-05``; a part out of
    range ends the date there (``[2024, 13]`` is ``2024``)."""
    if not parts or not 1000 <= parts[0] <= 9999:
        return None
    year = parts[0]
    if len(parts) < 2 or not 1 <= parts[1] <= 12:
        return f"{year:04d}"
    if len(parts) < 3:
        return f"{year:04d}-{parts[1]:02d}"
    try:
        return date(year, parts[1], parts[2]).isoformat()
    except ValueError:
        return f"{year:04d}-{parts[1]:02d}"


def date_span(published: str | None) -> tuple[date, date] | None:
    """The first and last day a (partial) ISO date may mean: ``2024`` is the whole year."""
    if not published:
        return None
    found = _ISO.match(published)
    if not found:
        return None
    year, month, day = (int(p) if p else 0 for p in found.groups())
    if day:
        return date(year, month, day), date(year, month, day)
    if month:
        last = date(year + (month == 12), month % 12 + 1, 1).toordinal() - 1
        return date(year, month, 1), date.fromordinal(last)
    return date(year, 1, 1), date(year, 12, 31)
