"""Semantic Scholar through its Graph API (``/paper/search``): papers with their abstract,
authors, venue, ids, open-access PDF and citation count.

A key is optional (``SEMANTIC_SCHOLAR_API_KEY``, sent as ``x-api-key``); without one the
calls share a public pool that answers 429 when it is busy, which the client backs off from
(its ``Retry-After``, else ``retry_backoff_s``) and asks once more. Time is pushed as
``publicationDateOrYear=since:until`` (an open end left empty). Relevance search pages by
``offset`` up to 1,000 results.
"""

from __future__ import annotations

import os
from typing import Any

from local2.tools._scholarly.base import (
    Page,
    PagedProvider,
    as_dict,
    as_list,
    json_object,
    next_offset,
)
from local2.tools._scholarly.client import Answer, ApiClient, Malformed
from local2.tools._scholarly.hit import ScholarlyHit, iso_date
from local2.tools._scholarly.scope import Pushed, Scope
from local2.tools._scholarly.settings import SemanticScholarSettings

FIELDS = (
    "paperId,title,abstract,url,venue,year,publicationDate,authors,externalIds,"
    "openAccessPdf,isOpenAccess,citationCount,publicationTypes,journal"
)
MAX_OFFSET = 1000
PREPRINT_VENUES = ("arxiv", "biorxiv", "medrxiv", "ssrn", "preprints")


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value else ""


# the Graph API's JSON (a paper), not checked yet
def _paper(item: dict[str, Any]) -> ScholarlyHit | None:
    # one paper of the Graph API's search answer, fields as FIELDS asks
    paper_id = _text(item.get("paperId"))
    if not paper_id:
        return None
    ids = as_dict(item.get("externalIds"))
    pdf = as_dict(item.get("openAccessPdf"))
    journal = as_dict(item.get("journal"))
    venue = _text(item.get("venue")) or _text(journal.get("name")) or None
    types = as_list(item.get("publicationTypes"))
    preprint = not types and (
        "ArXiv" in ids or any(v in (venue or "").lower() for v in PREPRINT_VENUES)
    )
    year = item.get("year")
    published = iso_date(_text(item.get("publicationDate"))) or (
        iso_date(str(year)) if isinstance(year, int) else None
    )
    authors = as_list(item.get("authors"))
    citations = item.get("citationCount")
    return ScholarlyHit(
        title=_text(item.get("title")) or paper_id,
        url=_text(item.get("url")) or f"https://www.semanticscholar.org/paper/{paper_id}",
        snippet=_text(item.get("abstract")),
        provider="semantic_scholar",
        kind="preprint" if preprint else "paper",
        published=published,
        authors=tuple(_text(a.get("name")) for a in authors if isinstance(a, dict)),
        venue=venue,
        doi=_text(ids.get("DOI")) or None,
        arxiv_id=_text(ids.get("ArXiv")) or None,
        pmid=_text(ids.get("PubMed")) or None,
        pmcid=(f"PMC{ids['PubMedCentral']}" if ids.get("PubMedCentral") else None),
        pdf_url=_text(pdf.get("url")) or None,
        open_access=item.get("isOpenAccess")
        if isinstance(item.get("isOpenAccess"), bool)
        else None,
        peer_reviewed=False if preprint else None,
        citations=citations if isinstance(citations, int) else None,
    )


def parse_search(answer: Answer, offset: int) -> Page:
    data = json_object(answer)
    items = data.get("data", [])
    if not isinstance(items, list):
        raise Malformed("data is not a list")
    total = data.get("total") if isinstance(data.get("total"), int) else None
    hits = [h for h in (_paper(i) for i in items if isinstance(i, dict)) if h is not None]
    after = data.get("next")
    if not isinstance(after, int):
        return Page(hits, total, None)
    return Page(hits, total, next_offset(offset, len(items), total, MAX_OFFSET))


def date_range(scope: Scope) -> str:
    """``2016-03-05:2020-06-06``, ``2016-03-05:`` or ``:2020-06-06``."""
    start = scope.since.isoformat() if scope.since else ""
    stop = scope.until.isoformat() if scope.until else ""
    return f"{start}:{stop}"


class SemanticScholarProvider(PagedProvider):
    name = "semantic_scholar"
    label = "Semantic Scholar"
    pushes = Pushed(time=True)

    def __init__(self, client: ApiClient, settings: SemanticScholarSettings) -> None:
        super().__init__(client, min(settings.page_size, 100))
        self.settings = settings
        self.key = os.environ.get(settings.api_key_env, "").strip()
        client.secrets = (self.key,)

    def page(self, query: str, scope: Scope, offset: int, size: int) -> tuple[Page, list[str]]:
        params: dict[str, str | int] = {
            "query": query,
            "offset": offset,
            "limit": min(size, MAX_OFFSET - offset),
            "fields": FIELDS,
        }
        if scope.timed:
            params["publicationDateOrYear"] = date_range(scope)
        headers = {"x-api-key": self.key} if self.key else {}
        url = f"{self.settings.base_url.rstrip('/')}/paper/search"
        return self.client.get(url, params, lambda a: parse_search(a, offset), headers)
