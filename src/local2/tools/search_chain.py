"""Which search provider answers: the one configured, or for ``auto`` the first that can.

``auto`` orders the registered providers that can serve right now (:mod:`.search_registry`,
each provider's ``auto`` rule and rank): as shipped, Tavily when ``TAVILY_API_KEY`` is set,
Brave when ``BRAVE_API_KEY`` is set, SearXNG when ``searxng_url`` answers, and ``ddgs``
(keyless) last. A provider that fails hands the query to the next, and each hand-over is a
``tool.fallback`` event; mock is never a fallback, only a configured choice. When the last
fails too, its error says whether every provider failed for a cause no other query can
cure (``ToolError.data["lasting"]``: no network, a refused connection or key), so a research
run stops searching the web instead of trying other words.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from local2 import events
from local2.config import WebSearchSettings
from local2.contracts import WEB_SEARCH
from local2.errors import ToolError
from local2.tools.search_failures import DOCTOR, lasting
from local2.tools.search_providers import SearchHit, SearchProvider
from local2.tools.search_registry import Probe, answers_http, provider_spec, provider_specs


def auto_reasons(
    cfg: WebSearchSettings,
    env: Mapping[str, str] | None = None,
    probe: Probe = answers_http,
) -> list[tuple[str, str]]:
    """``(provider, why)`` in the order ``auto`` tries them."""
    env = os.environ if env is None else env
    order = []
    for spec in provider_specs():
        why = spec.auto(cfg, env, probe) if spec.auto is not None else None
        if why is not None:
            order.append((spec.name, why))
    return order


def named_provider(
    name: str, cfg: WebSearchSettings, ddgs_client: Callable[[float], Any] | None = None
) -> SearchProvider:
    """The provider registered as ``name``, made from ``cfg`` (``ddgs_client``: a test's
    stand-in for the ddgs package's client)."""
    hooks = {"ddgs_client": ddgs_client} if ddgs_client is not None else {}
    return provider_spec(name).make(cfg, hooks)


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
        "tool": WEB_SEARCH,
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
                    causes = [str(f.get("cause") or "") for f in fallbacks]
                    causes.append(str(exc.data.get("cause") or ""))
                    raise ToolError(
                        str(exc),
                        fallback_events(fallbacks),
                        {**exc.data, "provider": provider.name, "lasting": lasting(causes)},
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
    probe: Probe = answers_http,
    ddgs_client: Callable[[float], Any] | None = None,
) -> ProviderChain:
    """The chain for ``cfg.provider``: one named provider, or ``auto``'s ordered list."""
    if cfg.provider != "auto":
        single = named_provider(cfg.provider, cfg, ddgs_client)
        return ProviderChain(lambda: [single])

    def auto() -> list[SearchProvider]:
        return [named_provider(name, cfg, ddgs_client) for name, _ in auto_reasons(cfg, env, probe)]

    return ProviderChain(auto)
