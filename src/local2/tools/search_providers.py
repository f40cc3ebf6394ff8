"""Search providers: each turns a query into a list of hits, or raises ``ToolError``.

All providers raise the same strings (``search timeout after Ns``,
``search failed: <status>``), adding a short explanation for 401/403/429 that names the
environment variable to check but never its value; a search that never reached its
provider says why in the person's words (:mod:`local2.tools.search_failures`: no network,
a refused connection), its client's own text kept for the event log only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from local2.errors import ToolError
from local2.ports import tls_context
from local2.tools.search_failures import (
    DOCTOR,
    RATE_FIX,
    bad_reply,
    cannot_connect,
    detail_of,
    status_failure,
    timed_out,
)

if TYPE_CHECKING:
    import httpx

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


def hits_from(
    items: Any, snippet_key: str, max_results: int, url_key: str = "url"
) -> list[SearchHit]:
    hits = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            hit = _hit(item.get("title"), item.get(url_key), item.get(snippet_key))
            if hit:
                hits.append(hit)
    return hits[:max_results]


class HttpJsonProvider:
    """Shared GET-a-JSON-API logic for SearXNG and Brave (and any provider of that kind)."""

    name = "http"
    key_env: str | None = None
    label = "the search API"  # who failed, in the person's words
    address_fix = ""  # at an address the person chose: how to correct it

    def __init__(self, timeout_s: float, transport: httpx.BaseTransport | None = None):
        self.timeout_s = timeout_s
        self._transport = transport

    def get_json(self, url: str, params: Mapping[str, str | int], headers: dict[str, str]) -> Any:
        # httpx loads with the first search, not here: loading settings imports the
        # providers' modules to learn their keys, and httpx is about 0.1 s of that start.
        import httpx

        try:
            with httpx.Client(
                timeout=self.timeout_s,
                transport=self._transport,
                trust_env=False,
                verify=tls_context(False),
            ) as client:
                response = client.get(url, params=params, headers=headers)
        except httpx.TimeoutException as exc:
            raise search_timeout(self.timeout_s, detail_of(exc)) from None
        except httpx.HTTPError as exc:
            raise cannot_connect(self.label, exc, address_fix=self.address_fix) from None
        if response.status_code != 200:
            raise self.failure(response.status_code)
        try:
            return response.json()
        except ValueError as exc:
            raise bad_reply(self.label, "not JSON", detail_of(exc)) from None

    def failure(self, status: int) -> ToolError:
        return search_failed(status, self.key_env)
