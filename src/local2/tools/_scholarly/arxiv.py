"""arXiv through its Atom API (``/api/query``): preprints, their first version's date, and
the journal reference and DOI where the authors gave them.

Its terms ask for no more than one request every three seconds on one connection
(``arxiv.min_interval_s``, at least 3, kept by the client's gate). Time is pushed as
``submittedDate:[YYYYMMDDHHMM TO YYYYMMDDHHMM]`` (GMT); domains cannot be, so they are
applied to the hits (all on arxiv.org).
"""

from __future__ import annotations

import re
from datetime import date
from urllib.parse import urlsplit

from lxml import etree

from local2.retrieval import terms, words
from local2.tools._scholarly.base import (
    Page,
    PagedProvider,
    next_offset,
    text_of,
    xml_root,
)
from local2.tools._scholarly.client import Answer, ApiClient, Malformed
from local2.tools._scholarly.hit import ScholarlyHit, iso_date
from local2.tools._scholarly.scope import Pushed, Scope
from local2.tools._scholarly.settings import ArxivSettings

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
MAX_TERMS = 12
_ID = re.compile(r"arxiv\.org/abs/(?P<id>.+?)(?:v\d+)?$")
FIRST_DAY = date(1991, 1, 1)  # arXiv's first submissions
LAST_DAY = date(2999, 12, 31)


def search_query(query: str, scope: Scope) -> str:
    """``all:w1 OR all:w2 ...`` over the query's content words (arXiv ranks by relevance, so
    a paper with more of them comes first), ANDed with the time window when there is one."""
    content = [w for w in words(query) if terms(w)] or words(query)
    text = " OR ".join(f"all:{w}" for w in dict.fromkeys(content[:MAX_TERMS]))
    if not text:
        text = f'all:"{query}"'
    if scope.timed:
        start = (scope.since or FIRST_DAY).strftime("%Y%m%d") + "0000"
        stop = (scope.until or LAST_DAY).strftime("%Y%m%d") + "2359"
        text = f"({text}) AND submittedDate:[{start} TO {stop}]"
    return text


def _https(url: str | None) -> str | None:
    """arXiv's own links in https (its feed writes http); a mirror's as it gave them."""
    if url and url.startswith("http://") and (urlsplit(url).hostname or "").endswith("arxiv.org"):
        return "https://" + url.removeprefix("http://")
    return url or None


def _entry(entry: etree._Element) -> ScholarlyHit | None:
    link = text_of(entry.find(f"{ATOM}id"))
    found = _ID.search(link)
    if not found:
        return None
    pdf = next(
        (a.get("href") for a in entry.findall(f"{ATOM}link") if a.get("title") == "pdf"), None
    )
    journal = text_of(entry.find(f"{ARXIV}journal_ref")) or None
    doi = text_of(entry.find(f"{ARXIV}doi")) or None
    arxiv_id = found.group("id")
    return ScholarlyHit(
        title=text_of(entry.find(f"{ATOM}title")) or arxiv_id,
        url=f"https://arxiv.org/abs/{arxiv_id}",
        snippet=text_of(entry.find(f"{ATOM}summary")),
        provider="arxiv",
        kind="preprint",
        published=iso_date(text_of(entry.find(f"{ATOM}published"))),
        authors=tuple(text_of(a.find(f"{ATOM}name")) for a in entry.findall(f"{ATOM}author")),
        venue=journal or "arXiv",
        doi=doi,
        arxiv_id=arxiv_id,
        pdf_url=_https(pdf),
        open_access=True,
        peer_reviewed=None if journal else False,  # a journal version exists, not this copy
        extra_urls=(f"https://doi.org/{doi}",) if doi else (),
    )


def parse_feed(answer: Answer, offset: int) -> Page:
    """An Atom feed as a page (:class:`Malformed` for anything else, or an error entry)."""
    root = xml_root(answer)
    if root.tag != f"{ATOM}feed":
        raise Malformed(f"not an Atom feed but <{etree.QName(root).localname}>")
    entries = root.findall(f"{ATOM}entry")
    if any("/api/errors" in text_of(e.find(f"{ATOM}id")) for e in entries):
        raise Malformed("an error entry: " + text_of(entries[0].find(f"{ATOM}summary"))[:200])
    total_text = text_of(root.find(f"{OPENSEARCH}totalResults"))
    total = int(total_text) if total_text.isdigit() else None
    hits = [h for h in (_entry(e) for e in entries) if h is not None]
    return Page(hits, total, next_offset(offset, len(entries), total, limit=30_000))


class ArxivProvider(PagedProvider):
    name = "arxiv"
    label = "arXiv"
    pushes = Pushed(time=True)

    def __init__(self, client: ApiClient, settings: ArxivSettings) -> None:
        super().__init__(client, min(settings.page_size, 2000))
        self.settings = settings

    def page(self, query: str, scope: Scope, offset: int, size: int) -> tuple[Page, list[str]]:
        params: dict[str, str | int] = {
            "search_query": search_query(query, scope),
            "start": offset,
            "max_results": size,
            "sortBy": "relevance",
            "sortOrder": "descending",
        }
        return self.client.get(self.settings.base_url, params, lambda a: parse_feed(a, offset))
