"""Search providers: each turns a query into a list of hits, or raises ``ToolError``.

All providers raise the same strings (``search timeout after Ns``,
``search failed: <status>``), adding a short explanation for 401/403/429 that names the
environment variable to check but never its value.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx

from local2.errors import ToolError

STATUS_HINTS = {
    401: "the API key was rejected: check {env}",
    403: "access forbidden: the key or plan does not allow this request",
    429: "rate limit or quota exceeded: try again later",
}


@dataclass(frozen=True)
class SearchHit:
    """One search result as the model sees it."""

    title: str
    url: str
    snippet: str


class SearchProvider(Protocol):
    """Anything that can search: ``search(query, max_results) -> hits``."""

    name: str

    def search(self, query: str, max_results: int) -> list[SearchHit]: ...


def _fmt_seconds(seconds: float) -> str:
    return f"{seconds:g}"


def search_timeout(seconds: float) -> ToolError:
    return ToolError(f"search timeout after {_fmt_seconds(seconds)}s")


def search_failed(status: int, env: str | None = None, hint: str | None = None) -> ToolError:
    """``search failed: <status>``, with a brief reason for the common statuses."""
    hint = hint or STATUS_HINTS.get(status, "").format(env=env or "the API key")
    return ToolError(f"search failed: {status} ({hint})" if hint else f"search failed: {status}")


def _hit(title: Any, url: Any, snippet: Any) -> SearchHit | None:
    if not url or not isinstance(url, str):
        return None
    return SearchHit(title=str(title or url), url=url, snippet=str(snippet or ""))


def _hits(items: Any, snippet_key: str, max_results: int, url_key: str = "url") -> list[SearchHit]:
    hits = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            hit = _hit(item.get("title"), item.get(url_key), item.get(snippet_key))
            if hit:
                hits.append(hit)
    return hits[:max_results]


class _HttpJsonProvider:
    """Shared GET-a-JSON-API logic for SearXNG and Brave."""

    name = "http"
    key_env: str | None = None

    def __init__(self, timeout_s: float, transport: httpx.BaseTransport | None = None):
        self.timeout_s = timeout_s
        self._transport = transport

    def _get_json(self, url: str, params: Mapping[str, str | int], headers: dict[str, str]) -> Any:
        try:
            with httpx.Client(
                timeout=self.timeout_s, transport=self._transport, trust_env=False
            ) as client:
                response = client.get(url, params=params, headers=headers)
        except httpx.TimeoutException:
            raise search_timeout(self.timeout_s) from None
        except httpx.HTTPError as exc:
            raise ToolError(
                f"search error: cannot reach {self.name} ({type(exc).__name__})"
            ) from None
        if response.status_code != 200:
            raise self._failure(response.status_code)
        try:
            return response.json()
        except ValueError:
            raise ToolError(f"search error: {self.name} returned invalid JSON") from None

    def _failure(self, status: int) -> ToolError:
        return search_failed(status, self.key_env)


class SearxngProvider(_HttpJsonProvider):
    """A SearXNG instance's JSON API (``/search?q=..&format=json``)."""

    name = "searxng"

    def __init__(self, base_url: str, timeout_s: float, **kw: Any):
        super().__init__(timeout_s, **kw)
        self.base_url = base_url.rstrip("/")

    def _failure(self, status: int) -> ToolError:
        if status == 403:
            return search_failed(
                403,
                hint="SearXNG refused JSON output: enable `json` under `search.formats` "
                "in its settings.yml",
            )
        return search_failed(status)

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        data = self._get_json(
            f"{self.base_url}/search",
            {"q": query, "format": "json"},
            {"Accept": "application/json"},
        )
        return _hits(
            data.get("results") if isinstance(data, dict) else None, "content", max_results
        )


class BraveProvider(_HttpJsonProvider):
    """Brave Search API: ``X-Subscription-Token`` header, ``web.results``."""

    name = "brave"
    key_env = "BRAVE_API_KEY"

    def __init__(self, url: str, timeout_s: float, **kw: Any):
        super().__init__(timeout_s, **kw)
        self.url = url

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        key = os.environ.get(self.key_env or "", "").strip()
        if not key:
            raise ToolError(
                "search unavailable: BRAVE_API_KEY is not set (get a key at "
                "https://api-dashboard.search.brave.com/ or choose another provider)"
            )
        data = self._get_json(
            self.url,
            {"q": query, "count": min(max_results, 20)},
            {"Accept": "application/json", "X-Subscription-Token": key},
        )
        web = data.get("web") if isinstance(data, dict) else None
        return _hits(
            web.get("results") if isinstance(web, dict) else None, "description", max_results
        )


class TavilyProvider:
    """Tavily through tavily-python; keyless mode when ``TAVILY_API_KEY`` is unset."""

    name = "tavily"

    def __init__(self, timeout_s: float, base_url: str | None = None, search_depth: str = "basic"):
        self.timeout_s = timeout_s
        self.base_url = base_url
        self.search_depth = search_depth

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        import requests
        from tavily import TavilyClient, errors

        key = os.environ.get("TAVILY_API_KEY", "").strip() or None
        try:
            client = TavilyClient(api_key=key, api_base_url=self.base_url)
        except errors.MissingAPIKeyError:  # clients older than keyless mode
            raise ToolError(
                "search unavailable: TAVILY_API_KEY is not set and this tavily-python "
                "has no keyless mode (set the key or choose another provider)"
            ) from None
        client.session.trust_env = False  # never route through an environment proxy
        try:
            data = client.search(
                query,
                max_results=max_results,
                search_depth=self.search_depth,
                timeout=self.timeout_s,
            )
        except errors.TimeoutError:
            raise search_timeout(self.timeout_s) from None
        except errors.InvalidAPIKeyError:
            raise search_failed(401, "TAVILY_API_KEY") from None
        except errors.TavilyKeylessLimitError:
            raise search_failed(
                429, hint="keyless Tavily limit reached: set TAVILY_API_KEY for more"
            ) from None
        except errors.UsageLimitExceededError:
            raise search_failed(429) from None
        except errors.ForbiddenError:
            raise search_failed(403) from None
        except errors.BadRequestError as exc:
            raise search_failed(400, hint=f"bad request: {str(exc)[:200]}") from None
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            raise search_failed(status) from None
        except requests.Timeout:
            raise search_timeout(self.timeout_s) from None
        except requests.RequestException as exc:
            raise ToolError(f"search error: cannot reach tavily ({type(exc).__name__})") from None
        finally:
            client.close()
        results = data.get("results") if isinstance(data, dict) else None
        return _hits(results, "content", max_results)


def _ddgs_client(timeout_s: float) -> Any:
    from ddgs import DDGS

    return DDGS(timeout=max(1, round(timeout_s)))


def _ddgs_reason(exc: Exception) -> str:
    """``ConnectError: ConnectError('x > y')`` (how ddgs wraps its client's errors) as
    ``ConnectError: x > y``, on one line and short."""
    reason = " ".join(str(exc).split())
    wrapped = re.fullmatch(r"(\w+): \1\((['\"])(.*)\2\)", reason)
    if wrapped:
        reason = f"{wrapped.group(1)}: {wrapped.group(3)}"
    return reason if len(reason) <= 200 else reason[:199] + "…"


class DdgsProvider:
    """Keyless search through the ``ddgs`` package (DuckDuckGo and other engines).

    ``ddgs`` talks to fixed public hosts through its own HTTP client, so tests pass a
    ``client_factory`` returning a stand-in with the recorded return values and errors.
    """

    name = "ddgs"

    def __init__(self, timeout_s: float, client_factory: Callable[[float], Any] | None = None):
        self.timeout_s = timeout_s
        self.client_factory = client_factory or _ddgs_client

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        try:
            from ddgs.exceptions import DDGSException, TimeoutException
        except ImportError:
            raise ToolError(
                "search unavailable: the ddgs package is not installed (pip install ddgs)"
            ) from None
        try:
            items = self.client_factory(self.timeout_s).text(query, max_results=max_results)
        except TimeoutException:
            raise search_timeout(self.timeout_s) from None
        except DDGSException as exc:
            reason = _ddgs_reason(exc)
            if reason.startswith("No results found"):
                return []
            raise ToolError(f"search error: ddgs: {reason}") from None
        return _hits(items, "body", max_results, url_key="href")


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
        return _hits(data, "snippet", max_results)
