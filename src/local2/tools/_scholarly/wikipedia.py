"""Wikipedia through the MediaWiki Action API (``list=search``), in the language the
settings name: articles with a snippet and the time of their last edit, which is the
version a citation of an encyclopedia article dates.

MediaWiki's etiquette asks for a User-Agent that names the program and for one request at
a time, which the client keeps. Search has no date filter, so a time scope is applied to
the hits (by that last edit); neither has it a domain one.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import quote

from local2.tools._scholarly.base import Page, PagedProvider, json_object, next_offset
from local2.tools._scholarly.client import Answer, ApiClient, Malformed
from local2.tools._scholarly.hit import ScholarlyHit, iso_date
from local2.tools._scholarly.scope import Scope
from local2.tools._scholarly.settings import WikipediaSettings

_TAG = re.compile(r"<[^>]+>")


def plain(snippet: str) -> str:
    """A search snippet's text: its ``<span class="searchmatch">`` marks and entities gone."""
    return " ".join(html.unescape(_TAG.sub("", snippet)).split())


class WikipediaProvider(PagedProvider):
    name = "wikipedia"
    label = "Wikipedia"

    def __init__(self, client: ApiClient, settings: WikipediaSettings) -> None:
        super().__init__(client, settings.page_size)
        self.settings = settings
        self.endpoint = settings.base_url.replace("{lang}", settings.language)

    def article_url(self, title: str) -> str:
        path = quote(title.replace(" ", "_"), safe="()_,'-.:")
        return self.settings.article_url.format(lang=self.settings.language, title=path)

    # MediaWiki's JSON (a search result), not checked yet
    def _hit(self, item: dict[str, Any]) -> ScholarlyHit | None:
        # one result of list=search (MediaWiki's JSON, formatversion=2)
        title = " ".join(str(item.get("title") or "").split())
        if not title:
            return None
        return ScholarlyHit(
            title=title,
            url=self.article_url(title),
            snippet=plain(str(item.get("snippet") or "")),
            provider="wikipedia",
            kind="encyclopedia",
            published=iso_date(str(item.get("timestamp") or "")),
            venue=f"Wikipedia ({self.settings.language})",
            open_access=True,
        )

    def parse(self, answer: Answer, offset: int) -> Page:
        data = json_object(answer)
        if "error" in data:
            error = data["error"] if isinstance(data["error"], dict) else {}
            raise Malformed(
                f"error {str(error.get('code', ''))[:40]}: {str(error.get('info', ''))[:160]}"
            )
        query = data.get("query")
        results = query.get("search") if isinstance(query, dict) else None
        if not isinstance(results, list):
            raise Malformed("no query.search")
        info = query.get("searchinfo") if isinstance(query, dict) else None
        total = info.get("totalhits") if isinstance(info, dict) else None
        hits = [h for h in (self._hit(i) for i in results if isinstance(i, dict)) if h is not None]
        more = data.get("continue")
        if not isinstance(more, dict) or not isinstance(more.get("sroffset"), int):
            return Page(hits, total if isinstance(total, int) else None, None)
        after = next_offset(offset, len(results), total if isinstance(total, int) else None)
        return Page(hits, total if isinstance(total, int) else None, after)

    def page(self, query: str, scope: Scope, offset: int, size: int) -> tuple[Page, list[str]]:
        params: dict[str, str | int] = {
            "action": "query",
            "list": "search",
            "srsearch": query,
            "srlimit": size,
            "sroffset": offset,
            "srprop": "snippet|timestamp",
            "format": "json",
            "formatversion": 2,
            "utf8": 1,
        }
        return self.client.get(self.endpoint, params, lambda a: self.parse(a, offset))
