"""PubMed through NCBI's E-utilities: ``esearch`` finds the PMIDs of a page, ``efetch``
brings their records (title, abstract, authors, journal, dates, DOI, PMCID, publication
types, a retraction among them).

NCBI allows 3 requests a second without a key and 10 with one (``NCBI_API_KEY``, sent as
``api_key``); ``tool`` and ``email`` name this program. Time is pushed as
``datetype``/``mindate``/``maxdate`` (``YYYY/MM/DD``; NCBI wants the two together, so an
open end is the first or last day it can mean).
"""

from __future__ import annotations

import os
from datetime import date

from lxml import etree

from local2.tools._scholarly.base import (
    Page,
    PagedProvider,
    json_object,
    next_offset,
    text_of,
    xml_root,
)
from local2.tools._scholarly.client import Answer, ApiClient, Malformed
from local2.tools._scholarly.hit import ScholarlyHit, date_parts
from local2.tools._scholarly.scope import Pushed, Scope
from local2.tools._scholarly.settings import PubmedSettings

MONTHS = {
    m: i
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1
    )
}
EARLIEST = date(1800, 1, 1)
LATEST = date(2999, 12, 31)
MAX_OFFSET = 9999  # esearch pages the first 10,000 PMIDs of a search


def _date(node: etree._Element | None) -> str | None:
    """A PubDate or ArticleDate (Year, Month as a number or a name, Day) as ISO; a
    MedlineDate (``2024 Mar-Apr``) as its year."""
    if node is None:
        return None
    year = text_of(node.find("Year")) or text_of(node.find("MedlineDate"))[:4]
    if not year.isdigit():
        return None
    month_text = text_of(node.find("Month")).lower()
    month = int(month_text) if month_text.isdigit() else MONTHS.get(month_text[:3], 0)
    day_text = text_of(node.find("Day"))
    day = int(day_text) if day_text.isdigit() else 0
    return date_parts([int(year), *([month] if month else []), *([day] if month and day else [])])


def _author(node: etree._Element) -> str:
    collective = text_of(node.find("CollectiveName"))
    if collective:
        return collective
    return " ".join(
        p for p in (text_of(node.find("ForeName")), text_of(node.find("LastName"))) if p
    )


def _article(node: etree._Element) -> ScholarlyHit | None:
    citation = node.find("MedlineCitation")
    article = citation.find("Article") if citation is not None else None
    pmid = text_of(citation.find("PMID")) if citation is not None else ""
    if article is None or not pmid:
        return None
    ids = {i.get("IdType"): text_of(i) for i in node.iterfind("PubmedData/ArticleIdList/ArticleId")}
    types = {text_of(t).lower() for t in article.iterfind("PublicationTypeList/PublicationType")}
    preprint = "preprint" in types
    pmcid = ids.get("pmc") or None
    doi = ids.get("doi") or None
    published = _date(article.find("Journal/JournalIssue/PubDate")) or _date(
        article.find("ArticleDate")
    )
    return ScholarlyHit(
        title=text_of(article.find("ArticleTitle")) or f"PMID {pmid}",
        url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
        snippet=" ".join(text_of(a) for a in article.iterfind("Abstract/AbstractText")),
        provider="pubmed",
        kind="preprint" if preprint else "paper",
        published=published,
        authors=tuple(_author(a) for a in article.iterfind("AuthorList/Author")),
        venue=text_of(article.find("Journal/Title")) or None,
        doi=doi,
        pmid=pmid,
        pmcid=pmcid,
        open_access=True if pmcid else None,  # PMC's copies are free to read
        peer_reviewed=False if preprint else None,
        retracted="retracted publication" in types,
        extra_urls=tuple(
            u
            for u in (
                f"https://pmc.ncbi.nlm.nih.gov/articles/{pmcid}/" if pmcid else "",
                f"https://doi.org/{doi}" if doi else "",
            )
            if u
        ),
    )


def parse_ids(answer: Answer) -> tuple[list[str], int | None]:
    """An esearch answer's PMIDs and count (:class:`Malformed` for an error or another
    shape; NCBI says a rate error in the body too)."""
    data = json_object(answer)
    if "error" in data:
        raise Malformed(str(data["error"])[:200])
    result = data.get("esearchresult")
    if not isinstance(result, dict) or not isinstance(result.get("idlist"), list):
        raise Malformed("no esearchresult.idlist")
    if "ERROR" in result:
        raise Malformed(str(result["ERROR"])[:200])
    count = str(result.get("count", ""))
    return [str(i) for i in result["idlist"]], int(count) if count.isdigit() else None


def parse_articles(answer: Answer) -> list[ScholarlyHit]:
    root = xml_root(answer)
    if root.tag != "PubmedArticleSet":
        raise Malformed(f"not a PubmedArticleSet but <{etree.QName(root).localname}>")
    return [h for h in (_article(a) for a in root.iterfind("PubmedArticle")) if h is not None]


class PubmedProvider(PagedProvider):
    name = "pubmed"
    label = "PubMed"
    pushes = Pushed(time=True)

    def __init__(self, client: ApiClient, settings: PubmedSettings) -> None:
        super().__init__(client, settings.page_size)
        self.settings = settings
        self.key = os.environ.get(settings.api_key_env, "").strip()
        client.secrets = (self.key,)
        # NCBI's rate: 3 a second, 10 with a key (never faster than the settings ask).
        pause = 0.1 if self.key else 1 / 3
        client.interval_s = lambda: max(pause, settings.min_interval_s)

    def _common(self) -> dict[str, str | int]:
        params: dict[str, str | int] = {"db": "pubmed", "tool": self.settings.tool}
        if self.settings.email:
            params["email"] = self.settings.email
        if self.key:
            params["api_key"] = self.key
        return params

    def page(self, query: str, scope: Scope, offset: int, size: int) -> tuple[Page, list[str]]:
        base = self.settings.base_url.rstrip("/")
        params = self._common() | {
            "term": query,
            "retmode": "json",
            "retstart": offset,
            "retmax": size,
            "sort": "relevance",
        }
        if scope.timed:
            params |= {
                "datetype": self.settings.datetype,
                "mindate": (scope.since or EARLIEST).strftime("%Y/%m/%d"),
                "maxdate": (scope.until or LATEST).strftime("%Y/%m/%d"),
            }
        (ids, total), retried = self.client.get(f"{base}/esearch.fcgi", params, parse_ids)
        if not ids:
            return Page([], total, None), retried
        fetch = self._common() | {"id": ",".join(ids), "retmode": "xml"}
        articles, more = self.client.get(f"{base}/efetch.fcgi", fetch, parse_articles)
        order = {pmid: i for i, pmid in enumerate(ids)}
        articles.sort(key=lambda h: order.get(h.pmid or "", len(order)))
        return Page(articles, total, next_offset(offset, len(ids), total, MAX_OFFSET)), [
            *retried,
            *more,
        ]
