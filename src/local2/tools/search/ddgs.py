"""Keyless search through the ``ddgs`` package (DuckDuckGo and other engines): ``auto``'s last."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Mapping
from typing import Any

from local2.config import ProviderSettings, WebSearchSettings
from local2.tools._search import (
    Precheck,
    Probe,
    ProviderSpec,
    SearchHit,
    ddgs_params,
    hits_from,
    register_provider,
    search_timeout,
)
from local2.tools._search_failures import (
    RATE_FIX,
    cannot_connect,
    detail_of,
    status_failure,
    unavailable,
)


class DdgsSettings(ProviderSettings):
    """None of its own: ddgs asks fixed public engines."""


def _ddgs_client(timeout_s: float) -> Any:
    # ddgs with the first search, not here: the settings import this module to learn its
    # keys, every command, and ddgs is about 15 ms of imports (python -X importtime).
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
        try:  # with the first search, as in _ddgs_client; a missing ddgs is told here
            # lazy: ddgs: 13-15 ms, and settings load reads this file on every command
            from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException
        except ImportError:
            raise unavailable(
                "search unavailable: the ddgs package is not installed", "pip install ddgs"
            ) from None
        try:
            client = self.client_factory(self.timeout_s)
            items = client.text(query, max_results=max_results, **ddgs_params())  # web_scope
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
        return hits_from(items, "body", max_results, url_key="href")


def _make(cfg: WebSearchSettings, hooks: Mapping[str, Any]) -> DdgsProvider:
    return DdgsProvider(cfg.timeout_s, hooks.get("ddgs_client"))


def _always(cfg: WebSearchSettings, env: Mapping[str, str], probe: Probe) -> str:
    return "keyless DuckDuckGo and other engines through the ddgs package"


def _installed(cfg: WebSearchSettings, named: bool) -> Precheck | None:
    if importlib.util.find_spec("ddgs") is None:
        return Precheck("fail", "ddgs is not installed", "pip install ddgs")
    return None


SPEC = register_provider(
    ProviderSpec("ddgs", DdgsSettings, _make, auto=_always, rank=90, precheck=_installed)
)
