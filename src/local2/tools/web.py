"""The web tools as the graph sees them: ``web_search`` and ``web_fetch``."""

from __future__ import annotations

from local2.config.schema import Settings
from local2.tools.base import Tool, configured_tool
from local2.tools.web_fetch import WebFetch
from local2.tools.web_search import WebSearch

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
            search,
            web.search.timeout_s + TIMEOUT_MARGIN_S,
            effects="read",
            output="untrusted",
        ),
        configured_tool(
            settings,
            "web_fetch",
            fetch,
            web.fetch.timeout_s + TIMEOUT_MARGIN_S,
            effects="read",
            output="untrusted",
            url_arg="url",
        ),
    ]
