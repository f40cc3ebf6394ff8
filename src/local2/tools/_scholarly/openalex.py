"""OpenAlex through its works API (``/works?search=``): papers and preprints with their
open-access copy, citation count and whether they are retracted (``is_retracted``).

OpenAlex has needed an API key since 2026-02-13 (``OPENALEX_API_KEY``, sent as
``api_key``; free, $1 of calls a day, a search costs $0.001). Without one it is left out of a
run with a notice (:meth:`OpenAlexProvider.notice`) and asks nothing. Time is pushed as
``filter=from_publication_date:…,to_publication_date:…``; paging by ``page`` up to
10,000 results.
"""

from __future__ import annotations

import os
from typing import Any

from local2.contracts import SourceKind
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
from local2.tools._scholarly.settings import OpenAlexSettings
from local2.tools._search_failures import unavailable

MAX_RESULTS = 10_000
PREPRINT_TYPES = {"preprint", "posted-content"}


def _tail(value: Any, prefix: str) -> str | None:
    """``https://doi.org/10.1/x`` as ``10.1/x`` (OpenAlex writes ids as URLs)."""
    text = str(value or "").strip()
    return text.removeprefix(prefix).strip("/") or None


def _pmcid(value: Any) -> str | None:
    """OpenAlex's PMC link as ``PMC1234567`` (it writes some without the prefix)."""
    tail = _tail(value, "https://www.ncbi.nlm.nih.gov/pmc/articles/")
    return f"PMC{tail}" if tail and tail.isdigit() else tail


def abstract(inverted: Any) -> str:
    """The abstract back from OpenAlex's inverted index (``{word: [positions]}``)."""
    if not isinstance(inverted, dict):
        return ""
    placed = sorted(
        (pos, str(word))
        for word, positions in inverted.items()
        if isinstance(positions, list)
        for pos in positions
        if isinstance(pos, int)
    )
    return " ".join(word for _, word in placed)


# OpenAlex's JSON (a work), not checked yet
def _work(item: dict[str, Any]) -> ScholarlyHit | None:
    # one work of the /works answer (OpenAlex's JSON)
    work_id = str(item.get("id") or "")
    if not work_id:
        return None
    ids = as_dict(item.get("ids"))
    primary = as_dict(item.get("primary_location"))
    best = as_dict(item.get("best_oa_location"))
    access = as_dict(item.get("open_access"))
    doi = _tail(item.get("doi"), "https://doi.org/")
    kind: SourceKind = "preprint" if str(item.get("type") or "") in PREPRINT_TYPES else "paper"
    landing = str(primary.get("landing_page_url") or "") or (
        f"https://doi.org/{doi}" if doi else work_id
    )
    cited = item.get("cited_by_count")
    authors = [
        str(as_dict(a.get("author")).get("display_name") or "")
        for a in as_list(item.get("authorships"))
        if isinstance(a, dict)
    ]
    return ScholarlyHit(
        title=" ".join(str(item.get("title") or item.get("display_name") or work_id).split()),
        url=landing,
        snippet=abstract(item.get("abstract_inverted_index")),
        provider="openalex",
        kind=kind,
        published=iso_date(str(item.get("publication_date") or item.get("publication_year") or "")),
        authors=tuple(a for a in authors if a),
        venue=str(as_dict(primary.get("source")).get("display_name") or "") or None,
        doi=doi,
        pmid=_tail(ids.get("pmid"), "https://pubmed.ncbi.nlm.nih.gov/"),
        pmcid=_pmcid(ids.get("pmcid")),
        pdf_url=str(best.get("pdf_url") or primary.get("pdf_url") or "") or None,
        open_access=access.get("is_oa") if isinstance(access.get("is_oa"), bool) else None,
        peer_reviewed=False if kind == "preprint" else None,
        retracted=item.get("is_retracted") if isinstance(item.get("is_retracted"), bool) else None,
        citations=cited if isinstance(cited, int) else None,
        extra_urls=tuple(u for u in (work_id, f"https://doi.org/{doi}" if doi else "") if u),
    )


def parse_works(answer: Answer, offset: int) -> Page:
    data = json_object(answer, "results")
    items = data["results"]
    if not isinstance(items, list):
        raise Malformed("results is not a list")
    count = as_dict(data.get("meta")).get("count")
    total = count if isinstance(count, int) else None
    hits = [h for h in (_work(i) for i in items if isinstance(i, dict)) if h is not None]
    return Page(hits, total, next_offset(offset, len(items), total, MAX_RESULTS))


class OpenAlexProvider(PagedProvider):
    name = "openalex"
    label = "OpenAlex"
    pushes = Pushed(time=True)

    def __init__(self, client: ApiClient, settings: OpenAlexSettings) -> None:
        super().__init__(client, min(settings.page_size, 100))
        self.settings = settings
        self.key = os.environ.get(settings.api_key_env, "").strip()
        client.secrets = (self.key,)

    def notice(self) -> str | None:
        if self.key:
            return None
        return (
            f"OpenAlex is left out: it needs an API key since February 2026. Get a free one "
            f"at https://openalex.org/settings/api and export `{self.settings.api_key_env}`."
        )

    def page(self, query: str, scope: Scope, offset: int, size: int) -> tuple[Page, list[str]]:
        if not self.key:
            raise unavailable(
                f"search unavailable: {self.settings.api_key_env} is not set (OpenAlex needs "
                "an API key)",
                f"Get a free key at https://openalex.org/settings/api and export "
                f"`{self.settings.api_key_env}`, or leave openalex out of the run's sources.",
            )
        params: dict[str, str | int] = {
            "search": query,
            "per_page": size,
            "page": offset // size + 1,
            "api_key": self.key,
        }
        window = [
            f"from_publication_date:{scope.since.isoformat()}" if scope.since else "",
            f"to_publication_date:{scope.until.isoformat()}" if scope.until else "",
        ]
        if scope.timed:
            params["filter"] = ",".join(w for w in window if w)
        url = f"{self.settings.base_url.rstrip('/')}/works"
        return self.client.get(url, params, lambda a: parse_works(a, offset))
