"""Canned results for tests and offline demos, marked as such; never part of ``auto``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from local2.config import ProviderSettings, WebSearchSettings
from local2.errors import ToolError
from local2.tools._search import Precheck, ProviderSpec, SearchHit, hits_from, register_provider


class MockSettings(ProviderSettings):
    mock_results: Path | None = None  # JSON of canned results for the mock provider


DEFAULT_MOCK_RESULTS: list[dict[str, str]] = [
    {
        "title": "This week in AI: open-weight models close the gap on reasoning benchmarks",
        "url": "https://news.example.org/ai/this-week-open-weight-reasoning",
        "snippet": "Several labs released open-weight models this week that match larger "
        "proprietary systems on math and coding benchmarks, while regulators in the EU "
        "published draft guidance for general-purpose AI providers.",
    },
    {
        "title": "AI chip demand pushes data-centre spending to a new record",
        "url": "https://tech.example.com/2026/ai-chip-demand-record-spending",
        "snippet": "Cloud providers announced new accelerator clusters and long-term power "
        "contracts this week as demand for AI training and inference keeps rising.",
    },
    {
        "title": "Small local models learn to call tools reliably",
        "url": "https://blog.example.net/small-models-tool-calling",
        "snippet": "A new evaluation shows that 4B-parameter models running on a laptop can "
        "use web search and page fetching tools when given clear schemas.",
    },
]


class MockProvider:
    """Canned, deterministic results for tests and offline demos (the result says so).

    ``results_path`` is a JSON file: a list of ``{title, url, snippet}``, or an object
    ``{"results": [...]}``, or ``{"queries": {"substring": [...]}, "default": [...]}`` where
    the first key contained in the (lower-cased) query wins.
    """

    name = "mock"
    canned = True

    def __init__(self, results_path: Path | None = None):
        self.results_path = results_path

    def _load(self) -> Any:
        if self.results_path is None:
            return DEFAULT_MOCK_RESULTS
        import json  # with a file to read: json's decoder compiles its patterns (~30 ms)

        try:
            return json.loads(Path(self.results_path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ToolError(f"search error: cannot read mock results ({exc})") from None

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        data = self._load()
        if isinstance(data, dict):
            chosen = data.get("results", data.get("default", []))
            for key, items in (data.get("queries") or {}).items():
                if key.lower() in query.lower():
                    chosen = items
                    break
            data = chosen
        return hits_from(data, "snippet", max_results)


def _make(cfg: WebSearchSettings, hooks: Mapping[str, Any]) -> MockProvider:
    return MockProvider(cfg.of(MockSettings).mock_results)


def _canned(cfg: WebSearchSettings, named: bool) -> Precheck:
    return Precheck(
        "warn",
        "provider is mock: canned results, no real search",
        "set web.search.provider: auto in web.yaml (keyless real search through ddgs)",
    )


SPEC = register_provider(ProviderSpec("mock", MockSettings, _make, precheck=_canned))
