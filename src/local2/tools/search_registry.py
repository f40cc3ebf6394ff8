"""The search providers, each registered by its own module in :mod:`local2.tools.search`.

A provider is one file: its class, its settings (a
:class:`~local2.config._search_registry.ProviderSettings` of its keys under ``web.search``),
how it is made from them, whether and why ``auto`` tries it, the key it reads from the
environment, and what ``local2 doctor`` checks before a test search. It ends with
``register_provider(ProviderSpec(...))``; the settings (the names ``web.search.provider``
accepts and the keys it refuses), the chain (:mod:`local2.tools.search_chain`), the doctor and the
documentation's checks read this registry, so none of them names a provider.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from local2.config import (
    ProviderSettings,
    WebSearchSettings,
    provider_settings,
    register_settings,
    unregister_settings,
)
from local2.ports import tls_context
from local2.tools.search_providers import SearchProvider

Probe = Callable[[str], bool]  # does anything answer HTTP at this URL (answers_http)
PROBE_TIMEOUT_S = 0.5
PROBE_TTL_S = 60.0
_probes: dict[str, tuple[float, bool]] = {}
_probes_lock = threading.Lock()
Status = Literal["ok", "warn", "fail"]


class AutoRule(Protocol):
    """Why ``auto`` tries the provider now (``None``: not now), e.g. its key is set."""

    def __call__(
        self, cfg: WebSearchSettings, env: Mapping[str, str], probe: Probe
    ) -> str | None: ...


class Maker(Protocol):
    """The provider, made from ``web.search`` (``hooks``: a test's stand-ins, by name)."""

    def __call__(self, cfg: WebSearchSettings, hooks: Mapping[str, Any]) -> SearchProvider: ...


@dataclass(frozen=True)
class Precheck:
    """What ``local2 doctor`` says before (instead of) a test search."""

    status: Status
    detail: str
    fix: str


@dataclass(frozen=True)
class ProviderSpec:
    """One search provider as everything else sees it.

    ``auto``: why ``auto`` tries it now, or ``None`` (never part of ``auto``); ``rank``
    orders ``auto``'s list (lower first). ``key_env``: the environment variable its key is
    read from (never from a file); ``key_required``: named without that key, it cannot
    search (the doctor says so). ``precheck``: anything else the doctor finds without
    searching (``named``: the configured provider, not one of ``auto``'s)."""

    name: str
    settings: type[ProviderSettings]
    make: Maker
    auto: AutoRule | None = None
    rank: int = 50
    key_env: str | None = None
    key_required: bool = False
    precheck: Callable[[WebSearchSettings, bool], Precheck | None] | None = None

    def doctor(
        self, cfg: WebSearchSettings, env: Mapping[str, str], named: bool
    ) -> Precheck | None:
        """The doctor's finding without a search, if any."""
        if named and self.key_required and self.key_env and not has_key(env, self.key_env):
            return Precheck(
                "fail", f"provider {self.name} needs {self.key_env}", f"export {self.key_env}=..."
            )
        return self.precheck(cfg, named) if self.precheck else None


_specs: dict[str, ProviderSpec] = {}


def register_provider(spec: ProviderSpec) -> ProviderSpec:
    """Make ``spec`` known: to the settings (its name and keys) and to the chain and doctor."""
    _specs[spec.name] = spec
    register_settings(spec.name, spec.settings)
    return spec


def unregister_provider(name: str) -> None:
    """Forget a provider (one a test registered for a while)."""
    _specs.pop(name, None)
    unregister_settings(name)


def provider_specs() -> list[ProviderSpec]:
    """Every provider, in ``auto``'s order (then by name): the shipped ones found first."""
    provider_settings()  # imports local2.tools.search's modules once
    return sorted(_specs.values(), key=lambda s: (s.rank, s.name))


def provider_spec(name: str) -> ProviderSpec:
    found = {s.name: s for s in provider_specs()}.get(name)
    if found is None:
        raise ValueError(f"unknown search provider {name!r}")
    return found


def has_key(env: Mapping[str, str], key: str) -> bool:
    return bool(env.get(key, "").strip())


def key_of(key_env: str) -> str | None:
    """The key in the environment, or ``None`` (a provider reads it per search: it may be
    exported while the app runs)."""
    return os.environ.get(key_env, "").strip() or None


def when_key_set(key_env: str) -> AutoRule:
    """``auto`` tries the provider while ``key_env`` is set."""

    def rule(cfg: WebSearchSettings, env: Mapping[str, str], probe: Probe) -> str | None:
        return f"{key_env} is set" if has_key(env, key_env) else None

    return rule


def answers_http(url: str) -> bool:
    """Does anything answer HTTP at ``url``? Remembered for a minute (checked per search)."""
    import httpx  # with the first search: see HttpJsonProvider.get_json

    now = time.monotonic()
    with _probes_lock:
        known = _probes.get(url)
        if known and now - known[0] < PROBE_TTL_S:
            return known[1]
    try:
        httpx.get(url, timeout=PROBE_TIMEOUT_S, trust_env=False, verify=tls_context(False))
        answers = True
    except httpx.HTTPError:
        answers = False
    with _probes_lock:
        _probes[url] = (now, answers)
    return answers
