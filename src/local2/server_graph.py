"""The graph for LangGraph Server (``langgraph dev`` / ``langgraph up``), named in langgraph.json.

LangGraph Server brings its own checkpointer and thread store, so the graph is compiled
without one (the clean turns still go to the turn log under the data directory). Model,
tools, memory and critic come from the usual settings (``LOCAL2_CONFIG``, ``LOCAL2_HOME``,
``OLLAMA_HOST``). A run's input is ``{"query": ...}``; the server's thread is the session.
"""

from __future__ import annotations

from langgraph.graph.state import CompiledStateGraph

from local2.config import Settings, load_settings
from local2.graph import build_services, compile_graph


def make_graph(settings: Settings | None = None) -> CompiledStateGraph:
    """The LoCAL2 graph with no checkpointer of its own (the server supplies one)."""
    return compile_graph(build_services(settings or load_settings()), checkpointer=None)


# Built when LangGraph Server loads this file (it looks the name up in the module).
graph = make_graph()
