"""LoCAL2: a local-first research assistant you can see inside.

``load_settings()`` and ``build_graph(settings, ...)`` are the notebook API; invoking the graph
with a ``thread_id`` is one turn of that session. Both are imported on first use, so
``import local2`` stays cheap.
"""

from typing import Any

__all__ = ["build_graph", "load_settings"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "load_settings":
        from local2.config import load_settings

        return load_settings
    if name == "build_graph":
        from local2.graph.topology import build_graph

        return build_graph
    raise AttributeError(f"module 'local2' has no attribute {name!r}")
