"""Which checkpoint a session continues from, and which checkpoints a dead turn left behind.

LangGraph writes a checkpoint after every step, so a turn that dies part-way — the process
killed, the model's stream dropped, the person pressing Stop — leaves its first checkpoints
(input, receive, ...) as the newest of the thread. They must not become the session's
*head*: the head is the newest **settled** checkpoint, one that

- ends a turn (nothing next),
- follows a published answer (only ``critique``/``ingest`` next: the answer was out, the
  person saw it; a process that died while the critic graded still answered), or
- waits for the person (an ``interrupt()``, e.g. an approval).

The next turn continues from the head, so a dead turn's checkpoints become a side branch of
their own, listed as abandoned; nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

AFTER_PUBLISH = frozenset(
    # and their counterparts in compare and retry turns (local2.graph._compare)
    {"critique", "ingest", "critique_pair", "ingest_pair", "settle_pair", "settle_retry"}
)
SEARCH_LIMIT = 500  # checkpoints looked through for the head (a dead turn leaves a handful)


def settled(snapshot: StateSnapshot) -> bool:
    """Whether a session may continue from this checkpoint (see the module docstring)."""
    pending = set(snapshot.next)
    return not pending or pending <= AFTER_PUBLISH or bool(snapshot.interrupts)


def checkpoint_id(config: Mapping[str, Any] | None) -> str | None:
    return ((config or {}).get("configurable") or {}).get("checkpoint_id")


def pick_head(snapshots: Iterable[StateSnapshot], *, live: bool = False) -> StateSnapshot | None:
    """The head among a thread's checkpoints, newest first.

    ``live``: a turn of this session is running in this process, so the newest checkpoint
    is work in progress, not a leftover.
    """
    for i, snapshot in enumerate(snapshots):
        if (live and i == 0) or settled(snapshot):
            return snapshot
    return None


def find_head(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    config: RunnableConfig,
    *,
    live: bool = False,
    latest: StateSnapshot | None = None,
) -> StateSnapshot | None:
    """The checkpoint the thread of ``config`` continues from, or None when it has none.

    Costs one read when the newest checkpoint is the head (always, unless a turn died).
    """
    latest = latest or graph.get_state(config)
    if not latest.values and not latest.next:
        return None
    if live or settled(latest):
        return latest
    return pick_head(graph.get_state_history(config, limit=SEARCH_LIMIT))


def root(
    graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig
) -> StateSnapshot | None:
    """The thread's first checkpoint (where a session whose every turn died starts again)."""
    oldest = None
    for snapshot in graph.get_state_history(config, limit=SEARCH_LIMIT):
        oldest = snapshot
    return oldest


def abandoned(rows: Iterable[Mapping[str, Any]], current: set[str]) -> set[str]:
    """Ids of checkpoints left by turns that never settled.

    ``rows``: newest first, each with ``checkpoint_id``, ``parent_id`` and ``settled``;
    ``current``: ids on the head's branch. A checkpoint is abandoned when it is not settled,
    not on the current branch, and no settled checkpoint descends from it.
    """
    rows = list(rows)
    children: dict[str | None, list[str]] = {}
    for row in rows:
        children.setdefault(row["parent_id"], []).append(row["checkpoint_id"])
    dead: set[str] = set()
    for row in rows:  # newest first: a checkpoint's children are decided before it
        cid = row["checkpoint_id"]
        if row["settled"] or cid in current:
            continue
        if all(child in dead for child in children.get(cid, [])):
            dead.add(cid)
    return dead
