"""The search providers the settings know: each provider's own module registers its name and
its settings (its keys under ``web.search``), so adding a provider touches no other file.

The settings must know every provider to refuse a misspelt name or key at start-up, but a
provider is code in ``local2.tools`` (a layer above). So the registry of their settings is
here and the providers fill it: the first time a name or key must be checked,
:func:`provider_settings` imports, once, every module of :data:`PROVIDERS_PACKAGE` (one per
provider, each calling ``local2.tools._search.register_provider``). That is this layer's one
import by name of a module above it, plugin discovery as a plugin registry does it. Those
modules import nothing costly at their top (their HTTP clients load with the first search),
so loading settings costs what it did.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from importlib.util import find_spec

from pydantic import BaseModel, ConfigDict

PROVIDERS_PACKAGE = "local2.tools.search"  # one module per provider
AUTO = "auto"  # not a provider: the chain of those that can serve now (tools/_search.py)


class ProviderSettings(BaseModel):
    """A provider's own keys under ``web.search``, beside the shared ones. Given the whole
    block, it takes its own keys; the block refuses a key no provider declares."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    def needs(self) -> str | None:
        """What this provider lacks to be the one configured (its message), else None."""
        return None


_settings: dict[str, type[ProviderSettings]] = {}
_lock = threading.RLock()
_found = False


def register_settings(name: str, model: type[ProviderSettings]) -> None:
    """``name``'s settings (called by the tools' registry when a provider registers)."""
    if name == AUTO:
        raise ValueError(f"{AUTO!r} is the chain of providers, not a provider's name")
    with _lock:
        _settings[name] = model


def unregister_settings(name: str) -> None:
    """Forget ``name`` (a provider registered for a while, as a test's)."""
    with _lock:
        _settings.pop(name, None)


def provider_settings() -> dict[str, type[ProviderSettings]]:
    """Every provider's settings by name, the shipped ones found on first use."""
    global _found
    with _lock:
        if not _found:
            _found = True  # set first: a provider's module may ask while it is imported
            spec = find_spec(PROVIDERS_PACKAGE)
            assert spec is not None and spec.submodule_search_locations is not None
            for info in pkgutil.iter_modules(spec.submodule_search_locations):
                importlib.import_module(f"{PROVIDERS_PACKAGE}.{info.name}")
        return dict(_settings)


def provider_names() -> list[str]:
    """What ``web.search.provider`` may name: ``auto`` and every registered provider."""
    return [AUTO, *sorted(provider_settings())]
