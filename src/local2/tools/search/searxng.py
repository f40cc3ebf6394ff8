"""SearXNG: a local (or team) metasearch instance's JSON API; ``auto`` tries it when it answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from local2.config import ProviderSettings, WebSearchSettings
from local2.errors import ToolError
from local2.tools._search import (
    HttpJsonProvider,
    Probe,
    ProviderSpec,
    SearchHit,
    answers_http,
    hits_from,
    register_provider,
    search_failed,
    searxng_params,
)


class SearxngSettings(ProviderSettings):
    searxng_url: str = "http://127.0.0.1:8888"


class SearxngProvider(HttpJsonProvider):
    """A SearXNG instance's JSON API (``/search?q=..&format=json``)."""

    name = "searxng"
    address_fix = "Start SearXNG, or correct `search.searxng_url` in web.yaml."

    def __init__(self, base_url: str, timeout_s: float, **kw: Any):
        super().__init__(timeout_s, **kw)
        self.base_url = base_url.rstrip("/")
        self.label = f"SearXNG at {self.base_url}"

    def failure(self, status: int) -> ToolError:
        if status == 403:
            return search_failed(
                403,
                hint="SearXNG refused JSON output: enable `json` under `search.formats` "
                "in its settings.yml",
            )
        return search_failed(status)

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        data = self.get_json(
            f"{self.base_url}/search",
            {"q": query, "format": "json", **searxng_params()},  # a run's window (web_scope)
            {"Accept": "application/json"},
        )
        return hits_from(
            data.get("results") if isinstance(data, dict) else None, "content", max_results
        )


searxng_answers = answers_http  # auto's default probe of searxng_url


def _make(cfg: WebSearchSettings, hooks: Mapping[str, Any]) -> SearxngProvider:
    return SearxngProvider(cfg.of(SearxngSettings).searxng_url, cfg.timeout_s)


def _answers(cfg: WebSearchSettings, env: Mapping[str, str], probe: Probe) -> str | None:
    url = cfg.of(SearxngSettings).searxng_url
    return f"SearXNG answers at {url}" if probe(url) else None


SPEC = register_provider(ProviderSpec("searxng", SearxngSettings, _make, auto=_answers, rank=30))
