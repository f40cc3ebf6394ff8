"""Crossref through its REST API: works by query (``/works?query=``), one DOI's record
(``/works/{doi}``), and retractions, which Crossref carries from Retraction Watch: a
retracted work lists the notice in ``updated-by`` with ``type: retraction``.

Requests go to the polite pool when ``crossref.mailto`` is set (as ``mailto=``); a Plus
token is sent when its variable is. The pause between calls follows the limits each answer
states (``x-rate-limit-limit`` calls per ``x-rate-limit-interval``): they were revised in
December 2025 and are read rather than written down here. Time is pushed as
``filter=from-pub-date:…,until-pub-date:…``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from local2.contracts import SourceKind
from local2.errors import ToolError
from local2.tools._scholarly.base import (
    Page,
    PagedProvider,
    as_dict,
    as_list,
    json_object,
    next_offset,
)
from local2.tools._scholarly.client import Answer, ApiClient, Malformed
from local2.tools._scholarly.hit import ScholarlyHit, date_parts
from local2.tools._scholarly.scope import Pushed, Scope
from local2.tools._scholarly.settings import CrossrefSettings

MAX_OFFSET = 10_000
RETRACTING = {"retraction", "withdrawal", "removal"}
_TAG = re.compile(r"<[^>]+>")
_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")


def _first(value: Any) -> str:
    if isinstance(value, list):
        value = value[0] if value else ""
    return " ".join(str(value or "").split())


# Crossref's JSON (a work), not checked yet
def _published(item: dict[str, Any]) -> str | None:
    # the first of Crossref's dates a work has (its JSON: {"date-parts": [[y, m, d]]})
    for key in ("published", "published-print", "published-online", "issued", "posted"):
        stamp = item.get(key)
        parts = stamp.get("date-parts") if isinstance(stamp, dict) else None
        if isinstance(parts, list) and parts and isinstance(parts[0], list):
            found = date_parts([p for p in parts[0] if isinstance(p, int)])
            if found:
                return found
    return None


def _author(person: Any) -> str:
    if not isinstance(person, dict):
        return ""
    given, family = _first(person.get("given")), _first(person.get("family"))
    return " ".join(p for p in (given, family) if p) or _first(person.get("name"))


# Crossref's JSON (a work), not checked yet
def _venue(item: dict[str, Any]) -> str | None:
    # a journal's title; a preprint's server (posted content names it as its institution)
    server = _first(as_dict(next(iter(as_list(item.get("institution"))), None)).get("name"))
    return _first(item.get("container-title")) or server or _first(item.get("publisher")) or None


# Crossref's JSON (a work), not checked yet
def retracted_by(item: dict[str, Any]) -> bool:
    """Whether a work's ``updated-by`` names a retraction (or withdrawal, removal)."""
    return any(
        str(as_dict(u).get("type", "")).lower() in RETRACTING
        for u in as_list(item.get("updated-by"))
    )


# Crossref's JSON (a work), not checked yet
def work_hit(item: dict[str, Any]) -> ScholarlyHit | None:
    # one work of Crossref's JSON (a work-list item or a /works/{doi} message)
    doi = _first(item.get("DOI"))
    if not doi:
        return None
    kind: SourceKind = "preprint" if item.get("subtype") == "preprint" else "paper"
    links = as_list(item.get("link"))
    pdf = next(
        (
            _first(link.get("URL"))
            for link in links
            if isinstance(link, dict) and link.get("content-type") == "application/pdf"
        ),
        None,
    )
    cited = item.get("is-referenced-by-count")
    authors = as_list(item.get("author"))
    return ScholarlyHit(
        title=_first(item.get("title")) or doi,
        url=_first(item.get("URL")) or f"https://doi.org/{doi}",
        snippet=" ".join(_TAG.sub(" ", _first(item.get("abstract"))).split()),
        provider="crossref",
        kind=kind,
        published=_published(item),
        authors=tuple(a for a in (_author(p) for p in authors) if a),
        venue=_venue(item),
        doi=doi.lower(),
        pdf_url=pdf or None,
        peer_reviewed=False if kind == "preprint" else None,
        retracted=retracted_by(item),
        citations=cited if isinstance(cited, int) else None,
    )


def parse_list(answer: Answer, offset: int) -> Page:
    data = json_object(answer, "message")
    message = data["message"]
    if data.get("status") != "ok" or not isinstance(message, dict):
        raise Malformed(f"status {str(data.get('status'))[:40]}")
    items = message.get("items")
    if not isinstance(items, list):
        raise Malformed("message.items is not a list")
    total = message.get("total-results") if isinstance(message.get("total-results"), int) else None
    hits = [h for h in (work_hit(i) for i in items if isinstance(i, dict)) if h is not None]
    return Page(hits, total, next_offset(offset, len(items), total, MAX_OFFSET))


def parse_work(answer: Answer) -> ScholarlyHit | None:
    data = json_object(answer, "message")
    if not isinstance(data["message"], dict):
        raise Malformed("message is not an object")
    return work_hit(data["message"])


def stated_interval(limit: str | None, interval: str | None) -> float | None:
    """The pause ``x-rate-limit-limit`` calls per ``x-rate-limit-interval`` (``1s``) allow
    between two, in seconds; ``None`` when either is missing or unreadable."""
    found = _INTERVAL.match(interval or "")
    if not found or not (limit or "").strip().isdigit() or int(str(limit)) <= 0:
        return None
    unit = {"ms": 0.001, "m": 60.0}.get(found.group(2) or "s", 1.0)
    return float(found.group(1)) * unit / int(str(limit))


class CrossrefProvider(PagedProvider):
    name = "crossref"
    label = "Crossref"
    pushes = Pushed(time=True)

    def __init__(self, client: ApiClient, settings: CrossrefSettings) -> None:
        super().__init__(client, min(settings.page_size, 1000))
        self.settings = settings
        self.token = os.environ.get(settings.plus_token_env, "").strip()
        client.secrets = (self.token,)
        self.pause_s = settings.min_interval_s
        client.interval_s = lambda: max(self.pause_s, settings.min_interval_s)

    def _headers(self) -> dict[str, str]:
        headers = {}
        if self.token:
            headers["Crossref-Plus-API-Token"] = f"Bearer {self.token}"
        if self.settings.mailto:
            headers["User-Agent"] = (
                f"{self.client.common.user_agent} (mailto:{self.settings.mailto})"
            )
        return headers

    def _params(self) -> dict[str, str | int]:
        return {"mailto": self.settings.mailto} if self.settings.mailto else {}

    def _read_limits(self, answer: Answer) -> None:
        stated = stated_interval(
            answer.headers.get("x-rate-limit-limit"), answer.headers.get("x-rate-limit-interval")
        )
        if stated is not None:
            self.pause_s = stated

    def page(self, query: str, scope: Scope, offset: int, size: int) -> tuple[Page, list[str]]:
        params = self._params() | {"query": query, "rows": size, "offset": offset}
        window = [
            f"from-pub-date:{scope.since.isoformat()}" if scope.since else "",
            f"until-pub-date:{scope.until.isoformat()}" if scope.until else "",
        ]
        if scope.timed:
            params["filter"] = ",".join(w for w in window if w)

        def parse(answer: Answer) -> Page:
            self._read_limits(answer)
            return parse_list(answer, offset)

        url = f"{self.settings.base_url.rstrip('/')}/works"
        return self.client.get(url, params, parse, self._headers())

    def lookup(self, doi: str) -> ScholarlyHit | None:
        """One DOI's record, or ``None`` when Crossref does not know it (404)."""
        url = f"{self.settings.base_url.rstrip('/')}/works/{quote(doi.strip(), safe='/')}"

        def parse(answer: Answer) -> ScholarlyHit | None:
            self._read_limits(answer)
            return parse_work(answer)

        try:
            hit, _ = self.client.get(url, self._params(), parse, self._headers())
        except ToolError as exc:
            if exc.data.get("status") == 404:
                return None
            raise
        return hit

    def mark_retractions(self, hits: Iterable[ScholarlyHit]) -> list[ScholarlyHit]:
        """``hits`` with ``retracted`` from Crossref wherever a hit has a DOI and its own
        source did not say (arXiv, Semantic Scholar publish no retraction)."""
        marked = []
        for hit in hits:
            if hit.doi and hit.retracted is None:
                record = self.lookup(hit.doi)
                if record is not None:
                    hit = dataclasses.replace(hit, retracted=record.retracted)
            marked.append(hit)
        return marked
