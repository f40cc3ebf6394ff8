"""Brave Search API: a key in ``BRAVE_API_KEY``; ``auto`` tries it while the key is set."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from local2.config import ProviderSettings, WebSearchSettings
from local2.tools._search import (
    HttpJsonProvider,
    ProviderSpec,
    SearchHit,
    brave_params,
    hits_from,
    key_of,
    register_provider,
    when_key_set,
)
from local2.tools._search_failures import unavailable

KEY_ENV = "BRAVE_API_KEY"


class BraveSettings(ProviderSettings):
    brave_url: str = "https://api.search.brave.com/res/v1/web/search"


class BraveProvider(HttpJsonProvider):
    """Brave Search API: ``X-Subscription-Token`` header, ``web.results``."""

    name = "brave"
    key_env = KEY_ENV
    label = "the Brave Search API"

    def __init__(self, url: str, timeout_s: float, **kw: Any):
        super().__init__(timeout_s, **kw)
        self.url = url

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        key = key_of(KEY_ENV)
        if not key:
            raise unavailable(
                "search unavailable: BRAVE_API_KEY is not set",
                "Get a key at https://api-dashboard.search.brave.com/ and export "
                "`BRAVE_API_KEY`, or set another provider in web.yaml (`search.provider`).",
            )
        data = self.get_json(
            self.url,
            {"q": query, "count": min(max_results, 20), **brave_params()},  # web_scope
            {"Accept": "application/json", "X-Subscription-Token": key},
        )
        web = data.get("web") if isinstance(data, dict) else None
        return hits_from(
            web.get("results") if isinstance(web, dict) else None, "description", max_results
        )


def _make(cfg: WebSearchSettings, hooks: Mapping[str, Any]) -> BraveProvider:
    return BraveProvider(cfg.of(BraveSettings).brave_url, cfg.timeout_s)


SPEC = register_provider(
    ProviderSpec(
        "brave",
        BraveSettings,
        _make,
        auto=when_key_set(KEY_ENV),
        rank=20,
        key_env=KEY_ENV,
        key_required=True,
    )
)
