"""LoCAL2: a local-first research assistant you can see inside.

The notebook API: ``load_settings()``, ``build_graph(settings, ...)`` (invoking the graph
with a ``thread_id`` is one turn of that session), ``build_research_graph(settings, ...)``
and :class:`Agent` (turns, history, replay, ratings as one object). All are imported on
first use, so ``import local2`` stays cheap. How the package is laid out:
``docs/architecture.md``.
"""

from typing import Any

__all__ = ["Agent", "build_graph", "build_research_graph", "load_settings"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "load_settings":
        from local2.config import load_settings

        return load_settings
    if name in ("build_graph", "build_research_graph"):
        from local2.service import wiring

        return getattr(wiring, name)
    if name == "Agent":
        from local2.service.agent import Agent

        return Agent
    raise AttributeError(f"module 'local2' has no attribute {name!r}")
