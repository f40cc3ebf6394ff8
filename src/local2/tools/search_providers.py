"""Search providers: each turns a query into a list of hits, or raises ``ToolError``.

All providers raise the same strings (``search timeout after Ns``,
``search failed: <status>``), adding a short explanation for 401/403/429 that names the
environment variable to check but never its value; a search that never reached its
provider says why in the person's words (:mod:`local2.tools.search_failures`: no network,
a refused connection), its client's own text kept for the event log only.
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
from local2.tools.search_failures import (
    DOCTOR,
    RATE_FIX,
    bad_reply,
    cannot_connect,
    detail_of,
    status_failure,
    timed_out,
    unavailable,
)

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


def search_timeout(seconds: float, detail: str = "") -> ToolError:
    return timed_out(float(_fmt_seconds(seconds)), detail)


def search_failed(status: int, env: str | None = None, hint: str | None = None) -> ToolError:
    """``search failed: <status>``, with a brief reason for the common statuses and the fix
    (for a rejected key: the variable to check, never its value)."""
    hint = hint or STATUS_HINTS.get(status, "").format(env=env or "the API key")
    fix = ""
    if status in (401, 403):
        key = f"`{env}`" if env else "the API key"
        fix = (
            f"Check {key} (and the plan it belongs to), or set another provider in web.yaml "
            f"(`search.provider`). {DOCTOR}"
        )
    elif status == 429:
        fix = RATE_FIX
    return status_failure(status, hint, fix)


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
    label = "the search API"  # who failed, in the person's words
    address_fix = ""  # at an address the person chose: how to correct it

    def __init__(self, timeout_s: float, transport: httpx.BaseTransport | None = None):
        self.timeout_s = timeout_s
        self._transport = transport

    def _get_json(self, url: str, params: Mapping[str, str | int], headers: dict[str, str]) -> Any:
        try:
            with httpx.Client(
                timeout=self.timeout_s, transport=self._transport, trust_env=False
            ) as client:
                response = client.get(url, params=params, headers=headers)
        except httpx.TimeoutException as exc:
            raise search_timeout(self.timeout_s, detail_of(exc)) from None
        except httpx.HTTPError as exc:
            raise cannot_connect(self.label, exc, address_fix=self.address_fix) from None
        if response.status_code != 200:
            raise self._failure(response.status_code)
        try:
            return response.json()
        except ValueError as exc:
            raise bad_reply(self.label, "not JSON", detail_of(exc)) from None

    def _failure(self, status: int) -> ToolError:
        return search_failed(status, self.key_env)


class SearxngProvider(_HttpJsonProvider):
    """A SearXNG instance's JSON API (``/search?q=..&format=json``)."""

    name = "searxng"
    address_fix = "Start SearXNG, or correct `search.searxng_url` in web.yaml."

    def __init__(self, base_url: str, timeout_s: float, **kw: Any):
        super().__init__(timeout_s, **kw)
        self.base_url = base_url.rstrip("/")
        self.label = f"SearXNG at {self.base_url}"

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
    label = "the Brave Search API"

    def __init__(self, url: str, timeout_s: float, **kw: Any):
        super().__init__(timeout_s, **kw)
        self.url = url

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        key = os.environ.get(self.key_env or "", "").strip()
        if not key:
            raise unavailable(
                "search unavailable: BRAVE_API_KEY is not set",
                "Get a key at https://api-dashboard.search.brave.com/ and export "
                "`BRAVE_API_KEY`, or set another provider in web.yaml (`search.provider`).",
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
            raise unavailable(
                "search unavailable: TAVILY_API_KEY is not set and this tavily-python "
                "has no keyless mode",
                "Export `TAVILY_API_KEY`, or set another provider in web.yaml (`search.provider`).",
            ) from None
        client.session.trust_env = False  # never route through an environment proxy
        try:
            data = client.search(
                query,
                max_results=max_results,
                search_depth=self.search_depth,
                timeout=self.timeout_s,
            )
        except errors.TimeoutError as exc:
            raise search_timeout(self.timeout_s, detail_of(exc)) from None
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
        except requests.Timeout as exc:
            raise search_timeout(self.timeout_s, detail_of(exc)) from None
        except requests.RequestException as exc:
            raise cannot_connect("Tavily", exc) from None
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


DDGS_ENGINES = "the search engines"  # ddgs asks DuckDuckGo, Brave, Mojeek, ... in turn


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
            from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException
        except ImportError:
            raise unavailable(
                "search unavailable: the ddgs package is not installed", "pip install ddgs"
            ) from None
        try:
            items = self.client_factory(self.timeout_s).text(query, max_results=max_results)
        except TimeoutException as exc:
            raise search_timeout(self.timeout_s, detail_of(exc)) from None
        except RatelimitException as exc:
            raise status_failure(
                429, "the search engines limit how often they are asked", RATE_FIX, detail_of(exc)
            ) from None
        except DDGSException as exc:
            if _ddgs_reason(exc).startswith("No results found"):
                return []
            raise cannot_connect(DDGS_ENGINES, exc) from None
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
