"""Research mode (DESIGN §10): plan, execute, replan, reflect, compose, verify.

``build_research_graph(settings)`` is the graph for notebooks; :class:`local2.research.
service.Research` runs, resumes and lists runs for the CLI, the HTTP API and the app.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_research_graph"]


def build_research_graph(*args: Any, **kwargs: Any) -> Any:
    """See :func:`local2.research.graph.build_research_graph` (imported on first use)."""
    from local2.research.graph import build_research_graph as build

    return build(*args, **kwargs)
