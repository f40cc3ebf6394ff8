"""The ``web_search`` tool: pick a provider from settings and format its hits for the model.

The result text starts with today's date so time-sensitive answers are grounded, and
lists each hit's title, snippet and URL so the model can pass a URL on to ``web_fetch``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any

from local2.config import ToolSchema, WebSearchSettings
from local2.contracts import WEB_SEARCH
from local2.documents import clean_text
from local2.errors import ToolError
from local2.tools._base import ToolContext, ToolResult, declare
from local2.tools.search_chain import ProviderChain, SearchAnswer, fallback_events, make_chain
from local2.tools.search_providers import SearchHit, SearchProvider

# What the model is told about it: written here only (generator.tools may tune it).
WEB_SEARCH_TOOL = declare(
    ToolSchema(
        name=WEB_SEARCH,
        description=(
            "Search the web to find sources on a topic. Returns titles, snippets and URLs. "
            "Use when you need current facts, news, prices or recent events."
        ),
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Concise search query"}},
            "required": ["query"],
        },
    )
)


SNIPPET_CHARS = 600
# First line of mock results, so neither the model nor the person takes them for a search.
CANNED_NOTE = "[Canned results from the mock search provider: this was not a real web search.]"


def _one_line(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", clean_text(text)).strip()
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + " …"


def format_hits(hits: list[SearchHit], today: dt.date, canned: bool = False) -> str:
    """The exact result text the model reads, which research's ledger and the fallback
    extract parse (after :data:`CANNED_NOTE` for mock results)."""
    blocks = [f"Today's date: {today.isoformat()}"]
    if canned:
        blocks[0] = f"{CANNED_NOTE}\n{blocks[0]}"
    for i, hit in enumerate(hits, 1):
        blocks.append(
            f"[{i}] Title: {_one_line(hit.title, 200)}\n"
            f"Snippet: {_one_line(hit.snippet, SNIPPET_CHARS)}\n"
            f"URL: {_one_line(hit.url, 2000)}"
        )
    return "\n\n".join(blocks)


class WebSearch:
    """Callable tool body: validates the query, searches (with fallbacks), formats."""

    def __init__(
        self,
        cfg: WebSearchSettings,
        provider: SearchProvider | ProviderChain | None = None,
        today: Callable[[], dt.date] = dt.date.today,
    ):
        self.cfg = cfg
        if provider is None:
            provider = make_chain(cfg)
        elif not isinstance(provider, ProviderChain):
            single = provider
            provider = ProviderChain(lambda: [single])
        self.chain = provider
        self.today = today

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        query = args.get("query") if isinstance(args, Mapping) else None
        if not isinstance(query, str) or not query.strip():
            raise ToolError("missing query argument")
        query = re.sub(r"\s+", " ", clean_text(query)).strip()
        wanted = (ctx.max_results if ctx is not None else None) or self.cfg.max_results
        found: SearchAnswer = self.chain.search(query, wanted)
        hits = found.hits
        data = {"provider": found.provider, "count": len(hits), "urls": [h.url for h in hits]}
        events = fallback_events(found.fallbacks)
        if not hits:
            text = f"No results found for: {query}"
            if found.canned:
                text = f"{CANNED_NOTE}\n{text}"
            return ToolResult(text=text, data=data, events=events)
        return ToolResult(
            text=format_hits(hits, self.today(), found.canned), data=data, events=events
        )
