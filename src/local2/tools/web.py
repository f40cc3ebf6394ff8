"""The web tools as the graph sees them: ``web_search`` and ``web_fetch``."""

from __future__ import annotations

from typing import Any

from local2.config.schema import Settings
from local2.tools.base import Tool, configured_tool
from local2.tools.web_fetch import WebFetch
from local2.tools.web_search import WebSearch

DEFAULTS: dict[str, tuple[str, dict[str, Any]]] = {
    "web_search": (
        "Search the web for current information. Returns titles, snippets and URLs.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Concise search query"}},
            "required": ["query"],
        },
    ),
    "web_fetch": (
        "Fetch the main text of a web page whose URL you know.",
        {
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "Full http:// or https:// URL"},
                "query": {
                    "type": "string",
                    "description": "What you are looking for on the page (long pages are cut "
                    "to the passages about it)",
                },
            },
            "required": ["url"],
        },
    ),
}
# Margin over the tool's own timeout so its precise message wins over the graph's generic one.
TIMEOUT_MARGIN_S = 5.0


def context_tokens(settings: Settings, backend: str | None = None) -> int:
    """The chat model's context size (of ``backend``, default the configured one): what a
    fetched page's share is taken of."""
    if (backend or settings.generator.backend) == "embedded":
        return settings.embedded.n_ctx
    return settings.generator.num_ctx


def web_tools(settings: Settings, backend: str | None = None) -> list[Tool]:
    """``web_search`` and ``web_fetch`` configured from ``settings.web``."""
    web = settings.web
    search = WebSearch(web.search)
    fetch = WebFetch(
        web.fetch, favor=web.fetch.extract_favor, num_ctx=context_tokens(settings, backend)
    )
    # Both only read, and both bring outside text into the context; web_fetch sends a
    # request to whatever URL it is given, so it is also watched for where that URL came from.
    return [
        configured_tool(
            settings,
            "web_search",
            DEFAULTS["web_search"],
            search,
            web.search.timeout_s + TIMEOUT_MARGIN_S,
            effects="read",
            output="untrusted",
        ),
        configured_tool(
            settings,
            "web_fetch",
            DEFAULTS["web_fetch"],
            fetch,
            web.fetch.timeout_s + TIMEOUT_MARGIN_S,
            effects="read",
            output="untrusted",
            url_arg="url",
        ),
    ]
