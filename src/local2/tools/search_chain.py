"""Which search provider answers: the one configured, or for ``auto`` the first that can.

``auto`` orders the providers that can serve right now: Tavily when ``TAVILY_API_KEY`` is
set, Brave when ``BRAVE_API_KEY`` is set, SearXNG when ``searxng_url`` answers, and ``ddgs``
(keyless) last. A provider that fails hands the query to the next, and each hand-over is a
``tool.fallback`` event; mock is never a fallback, only a configured choice.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

import httpx

from local2 import events
from local2.config import WebSearchSettings
from local2.errors import ToolError
from local2.tools.search_failures import DOCTOR
from local2.tools.search_providers import (
    BraveProvider,
    DdgsProvider,
    MockProvider,
    SearchHit,
    SearchProvider,
    SearxngProvider,
    TavilyProvider,
)

PROBE_TIMEOUT_S = 0.5
PROBE_TTL_S = 60.0
_probes: dict[str, tuple[float, bool]] = {}
_probes_lock = threading.Lock()


def searxng_answers(url: str) -> bool:
    """Does anything answer HTTP at ``url``? Remembered for a minute (checked per search)."""
    now = time.monotonic()
    with _probes_lock:
        known = _probes.get(url)
        if known and now - known[0] < PROBE_TTL_S:
            return known[1]
    try:
        httpx.get(url, timeout=PROBE_TIMEOUT_S, trust_env=False)
        answers = True
    except httpx.HTTPError:
        answers = False
    with _probes_lock:
        _probes[url] = (now, answers)
    return answers


def _has(env: Mapping[str, str], key: str) -> bool:
    return bool(env.get(key, "").strip())


def auto_reasons(
    cfg: WebSearchSettings,
    env: Mapping[str, str] | None = None,
    probe: Callable[[str], bool] = searxng_answers,
) -> list[tuple[str, str]]:
    """``(provider, why)`` in the order ``auto`` tries them."""
    env = os.environ if env is None else env
    order = []
    if _has(env, "TAVILY_API_KEY"):
        order.append(("tavily", "TAVILY_API_KEY is set"))
    if _has(env, "BRAVE_API_KEY"):
        order.append(("brave", "BRAVE_API_KEY is set"))
    if probe(cfg.searxng_url):
        order.append(("searxng", f"SearXNG answers at {cfg.searxng_url}"))
    order.append(("ddgs", "keyless DuckDuckGo and other engines through the ddgs package"))
    return order


def named_provider(
    name: str, cfg: WebSearchSettings, ddgs_client: Callable[[float], Any] | None = None
) -> SearchProvider:
    if name == "tavily":
        return TavilyProvider(cfg.timeout_s, cfg.tavily_url, cfg.tavily_search_depth)
    if name == "searxng":
        return SearxngProvider(cfg.searxng_url, cfg.timeout_s)
    if name == "brave":
        return BraveProvider(cfg.brave_url, cfg.timeout_s)
    if name == "ddgs":
        return DdgsProvider(cfg.timeout_s, ddgs_client)
    if name == "mock":
        return MockProvider(cfg.mock_results)
    if name == "corpus" and cfg.corpus_path is not None:
        from local2.tools.corpus import CorpusProvider

        return CorpusProvider(cfg.corpus_path)
    raise ValueError(f"unknown search provider {name!r}")


class Fallback(TypedDict):
    """A provider that failed and the one tried next (a ``tool.fallback`` event's fields)."""

    tool: str
    failed: str
    error: str  # in the person's words
    next: str
    detail: NotRequired[str]  # the client's own text (the event log's only)
    cause: NotRequired[str]  # local2.tools.search_failures' name for it


@dataclass
class SearchAnswer:
    hits: list[SearchHit]
    provider: str  # the one that answered
    canned: bool = False  # mock results
    fallbacks: list[Fallback] = field(default_factory=list)


SEARCH_FIX = (
    "Check this machine's network connection, or set another provider in web.yaml "
    f"(`search.provider`: searxng, tavily or brave). {DOCTOR}"
)


def fallback_events(fallbacks: list[Fallback]) -> list[tuple[str, dict[str, object]]]:
    return [(events.TOOL_FALLBACK, dict(f)) for f in fallbacks]


def _fallback(failed: str, exc: ToolError, next_name: str) -> Fallback:
    handed: Fallback = {
        "tool": "web_search",
        "failed": failed,
        "error": str(exc),
        "next": next_name,
    }
    if detail := exc.data.get("detail"):
        handed["detail"] = str(detail)
    if cause := exc.data.get("cause"):
        handed["cause"] = str(cause)
    return handed


class ProviderChain:
    """The providers to try, in order; ``providers`` is re-evaluated per search (keys and a
    local SearXNG may come and go while the app runs)."""

    def __init__(self, providers: Callable[[], Sequence[SearchProvider]]):
        self.providers = providers

    def search(self, query: str, max_results: int) -> SearchAnswer:
        chain = list(self.providers())
        fallbacks: list[Fallback] = []
        for i, provider in enumerate(chain):
            try:
                hits = provider.search(query, max_results)
            except ToolError as exc:
                if i + 1 == len(chain):
                    raise ToolError(
                        str(exc),
                        fallback_events(fallbacks),
                        {**exc.data, "provider": provider.name},
                        exc.fix or SEARCH_FIX,
                    ) from None
                fallbacks.append(_fallback(provider.name, exc, chain[i + 1].name))
                continue
            canned = bool(getattr(provider, "canned", False))
            return SearchAnswer(hits, provider.name, canned, fallbacks)
        raise ToolError("search unavailable: no provider configured", fix=SEARCH_FIX)


def make_chain(
    cfg: WebSearchSettings,
    env: Mapping[str, str] | None = None,
    probe: Callable[[str], bool] = searxng_answers,
    ddgs_client: Callable[[float], Any] | None = None,
) -> ProviderChain:
    """The chain for ``cfg.provider``: one named provider, or ``auto``'s ordered list."""
    if cfg.provider != "auto":
        single = named_provider(cfg.provider, cfg, ddgs_client)
        return ProviderChain(lambda: [single])

    def auto() -> list[SearchProvider]:
        return [named_provider(name, cfg, ddgs_client) for name, _ in auto_reasons(cfg, env, probe)]

    return ProviderChain(auto)
