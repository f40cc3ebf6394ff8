"""The ``web_search`` tool: pick a provider from settings and format its hits for the model.

The result text starts with today's date so time-sensitive answers are grounded, and
lists each hit's title, snippet and URL so the model can pass a URL on to ``web_fetch``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any

from local2.config.schema import WebSearchSettings
from local2.tools.base import ToolContext, ToolError, ToolResult
from local2.tools.extract import clean_text
from local2.tools.search_providers import (
    BraveProvider,
    MockProvider,
    SearchHit,
    SearchProvider,
    SearxngProvider,
    TavilyProvider,
)

SNIPPET_CHARS = 600


def make_provider(cfg: WebSearchSettings) -> SearchProvider:
    """The provider named in settings."""
    if cfg.provider == "tavily":
        return TavilyProvider(cfg.timeout_s, cfg.tavily_url, cfg.tavily_search_depth)
    if cfg.provider == "searxng":
        return SearxngProvider(cfg.searxng_url, cfg.timeout_s)
    if cfg.provider == "brave":
        return BraveProvider(cfg.brave_url, cfg.timeout_s)
    return MockProvider(cfg.mock_results)


def _one_line(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", clean_text(text)).strip()
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + " …"


def format_hits(hits: list[SearchHit], today: dt.date) -> str:
    """The exact result text of DESIGN §3."""
    blocks = [f"Today's date: {today.isoformat()}"]
    for i, hit in enumerate(hits, 1):
        blocks.append(
            f"[{i}] Title: {_one_line(hit.title, 200)}\n"
            f"Snippet: {_one_line(hit.snippet, SNIPPET_CHARS)}\n"
            f"URL: {_one_line(hit.url, 2000)}"
        )
    return "\n\n".join(blocks)


class WebSearch:
    """Callable tool body: validates the query, searches, formats."""

    def __init__(
        self,
        cfg: WebSearchSettings,
        provider: SearchProvider | None = None,
        today: Callable[[], dt.date] = dt.date.today,
    ):
        self.cfg = cfg
        self.provider = provider or make_provider(cfg)
        self.today = today

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        query = args.get("query") if isinstance(args, Mapping) else None
        if not isinstance(query, str) or not query.strip():
            raise ToolError("missing query argument")
        query = re.sub(r"\s+", " ", clean_text(query)).strip()
        hits = self.provider.search(query, self.cfg.max_results)
        data = {"provider": self.provider.name, "count": len(hits), "urls": [h.url for h in hits]}
        if not hits:
            return ToolResult(text=f"No results found for: {query}", data=data)
        return ToolResult(text=format_hits(hits, self.today()), data=data)
