"""The graph for LangGraph Server (``langgraph dev`` / ``langgraph up``), named in langgraph.json.

LangGraph Server brings its own checkpointer and store: the graph is compiled without a
checkpointer, and the clean turns (``local2.storage.store_turn_log``) and the arena's votes
go to the platform's store, so nothing about the conversation is kept in a local file. Model, tools,
memory and critic come from the usual settings (``LOCAL2_CONFIG``, ``LOCAL2_HOME``,
``OLLAMA_HOST``; memory on a Chroma server with ``memory.chroma_url``). A run's input is
``{"query": ...}``; the server's thread is the session.
"""

from __future__ import annotations

from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from local2.config import Settings
from local2.graph.topology import compile_graph
from local2.service.wiring import wire
from local2.storage.bundles import Storage
from local2.storage.locks import SharedLocks
from local2.storage.store_turn_log import StoreTurnLog
from local2.storage.votes import StoreVoteLog


def make_graph(
    settings: Settings | None = None, store: BaseStore | None = None
) -> CompiledStateGraph:
    """The LoCAL2 graph with no checkpointer or store of its own (the server supplies both).

    Outside the server pass a ``store`` (a test, a notebook); LangGraph Server refuses a
    graph that brings its own.
    """
    # The turns, and the arena's votes beside them, go to the platform's store.
    platform = Storage(None, StoreTurnLog(), SharedLocks(), votes=StoreVoteLog())
    wired = wire(settings, storage=platform)
    return compile_graph(wired.services, checkpointer=None, store=store)


# Built when LangGraph Server loads this file (it looks the name up in the module).
graph = make_graph()
