"""The graph for LangGraph Server (``langgraph dev`` / ``langgraph up``), named in langgraph.json.

LangGraph Server brings its own checkpointer and store: the graph is compiled without a
checkpointer, and the clean turns (``local2.storage._store_turn_log``) and the arena's votes
go to the platform's store, so nothing about the conversation is kept in a local file. Model, tools,
memory and critic come from the usual settings (``LOCAL2_CONFIG``, ``LOCAL2_HOME``,
``OLLAMA_HOST``; memory on a Chroma server with ``memory.chroma_url``). A run's input is
``{"query": ...}``; the server's thread is the session.

Whose turn it is comes from the platform's custom auth (:mod:`local2.platform.auth`): the
server puts the person it authenticated in the run's config, the graph's first step
(``identify``) writes it into the turn state as ``owner`` (whatever the input said), so
memory is recalled and kept as theirs, and the turns and votes go to their part of the
store (:mod:`local2.platform.owners`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.graph import START
from langgraph.store.base import BaseStore

from local2.config import Settings
from local2.contracts import LOCAL_NAME
from local2.graph import TurnGraph, TurnState
from local2.platform.owners import OwnedStore, run_owner
from local2.service import build_platform_graph
from local2.storage import platform_store

FIRST = "receive"  # the turn's first step in local2.graph._graph


def owners_store() -> BaseStore:
    """The platform's store as the run's owner sees it: their own part of it."""

    store, owner = platform_store(), run_owner(get_config())
    return store if owner == LOCAL_NAME else OwnedStore(store, owner)


class Identified(TypedDict):
    """The identify step's update of a turn's (or a run's) state: whose it is."""

    owner: str


def identify(state: Mapping[str, Any], config: RunnableConfig) -> Identified:
    """Whose turn this is: the person the platform authenticated, never the input's say."""
    return {"owner": run_owner(config)}


def identify_turn(state: TurnState, config: RunnableConfig) -> Identified:
    """:func:`identify` as a node of the turn graph (its input: the turn's state)."""
    return identify(state, config)


def identified(compiled: TurnGraph, store: BaseStore | None) -> TurnGraph:
    """``compiled`` with :func:`identify` before its first step, compiled again."""
    builder = compiled.builder
    if (START, FIRST) not in builder.edges:
        raise RuntimeError(f"The turn graph no longer starts at '{FIRST}': update FIRST.")
    builder.compiled = False  # compiled again below, with the step in
    # The server passes its own dict as a run's context (its configurable values), which
    # LangGraph would try to turn into a TurnContext: without a schema it arrives as it is,
    # and every node runs with the graph's default context (local2.graph._turn).
    builder.context_schema = None
    builder.edges.discard((START, FIRST))
    builder.add_node("identify", identify_turn)
    builder.add_edge(START, "identify")
    builder.add_edge("identify", FIRST)
    limit = int((compiled.config or {}).get("recursion_limit", 25)) + 1  # one step more
    recompiled = builder.compile(checkpointer=None, store=store, name=compiled.name)
    return recompiled.with_config(recursion_limit=limit)


def make_graph(settings: Settings | None = None, store: BaseStore | None = None) -> TurnGraph:
    """The LoCAL2 graph with no checkpointer or store of its own (the server supplies both).

    Outside the server pass a ``store`` (a test, a notebook); LangGraph Server refuses a
    graph that brings its own. The owner is ``configurable.langgraph_auth_user_id`` (set by
    the server; local without it).
    """
    # The turns, and the arena's votes beside them, go to the owner's part of the store.
    return identified(build_platform_graph(settings, owners_store, store), store)


# Built when LangGraph Server loads this file (it looks the name up in the module).
graph = make_graph()
