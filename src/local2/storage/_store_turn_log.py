"""The turn log in a LangGraph store: LangGraph Server's own, when the graph runs there.

On ``langgraph dev`` / ``langgraph up`` the platform supplies the checkpointer and a store
(in memory for ``dev``, Postgres for ``up``); the clean turns go to that store, under the
namespace ``("local2", "turns")``, one item per turn keyed by its id, so nothing is kept in
a local file. Same append-only shape as the SQL logs: each item names its parent.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from langgraph.store.base import BaseStore

from local2.contracts import SessionSummary
from local2.storage._turn_log import Turn, TurnLog

NAMESPACE = ("local2", "turns")
NOTES = ("local2", "turn_notes")  # then the turn's id: what was learned after the answer
SET_ASIDE = ("local2", "eval_sessions")  # sessions kept out of the list: eval runs' questions


def platform_store() -> BaseStore:
    """The store of the graph run in progress (LangGraph Server's, or the compiled one)."""
    # langgraph.config: LangGraph's runtime, 726 modules at import; only in a Server run
    from langgraph.config import get_store

    store = get_store()
    if store is None:
        raise RuntimeError("The turn log needs a LangGraph store: compile the graph with one.")
    return store


# value: an item's value as the LangGraph store gives it back (the JSON _insert put)
def _turn(key: str, value: dict[str, Any], with_record: bool = False) -> Turn:
    return Turn(
        id=key,
        parent_id=value.get("parent_id"),
        session_id=value["session_id"],
        query_id=value["query_id"],
        user=value["user"],
        assistant=value["assistant"],
        created_at=float(value["created_at"]),
        record=value.get("record") if with_record else None,
    )


class StoreTurnLog(TurnLog):
    """Turns as items of a :class:`BaseStore`, found at call time by ``store_of``."""

    def __init__(self, store_of: Callable[[], BaseStore] = platform_store) -> None:
        self._store_of = store_of

    def _insert(self, turn: Turn) -> None:
        value = {k: v for k, v in asdict(turn).items() if k != "id"}
        self._store_of().put(NAMESPACE, turn.id, value, index=False)

    def window(self, head: str | None, max_turns: int, *, records: bool = False) -> list[Turn]:
        store = self._store_of()
        turns: list[Turn] = []
        current = head
        while current is not None and len(turns) < max_turns:
            item = store.get(NAMESPACE, current)
            if item is None:
                break
            turns.append(_turn(item.key, item.value, with_record=records))
            current = item.value.get("parent_id")
        turns.reverse()
        return turns

    def note(self, turn_id: str, kind: str, value: Any) -> None:
        entry = {"kind": kind, "value": value, "created_at": time.time()}
        self._store_of().put((*NOTES, turn_id), uuid.uuid4().hex, entry, index=False)

    def notes(self, turn_ids: list[str]) -> dict[str, dict[str, Any]]:  # JSON read back
        found: dict[str, dict[str, Any]] = {}  # {turn_id: {kind: value}}, as note() kept them
        store = self._store_of()
        for turn_id in turn_ids:
            items = store.search((*NOTES, turn_id), limit=1000)
            for item in sorted(items, key=lambda i: float(i.value["created_at"])):
                found.setdefault(turn_id, {})[item.value["kind"]] = item.value["value"]
        return found

    def find(self, session_id: str, query_id: str) -> Turn | None:
        found = self._store_of().search(
            NAMESPACE, filter={"session_id": session_id, "query_id": query_id}, limit=100
        )
        if not found:
            return None
        latest = max(found, key=lambda item: float(item.value["created_at"]))
        return _turn(latest.key, latest.value, with_record=True)

    def sessions(self, limit: int = 20, owner: str | None = None) -> list[SessionSummary]:
        """Recent sessions among the latest 1000 turns (the platform lists its own threads,
        filtered by owner through its own auth: ``local2.platform.auth``)."""
        store = self._store_of()
        by_session: dict[str, list[Turn]] = {}
        for item in store.search(NAMESPACE, limit=1000):
            turn = _turn(item.key, item.value)
            by_session.setdefault(turn.session_id, []).append(turn)
        rows: list[SessionSummary] = []
        for session_id, turns in by_session.items():
            if store.get(SET_ASIDE, session_id) is not None:
                continue
            turns.sort(key=lambda t: t.created_at)
            rows.append(
                {
                    "session_id": session_id,
                    "turns": len(turns),
                    "started_at": turns[0].created_at,
                    "updated_at": turns[-1].created_at,
                    "first": turns[0].user,
                }
            )
        rows.sort(key=lambda r: float(r["updated_at"]), reverse=True)
        return rows[:limit]

    def set_aside(self, session_id: str) -> None:
        self._store_of().put(SET_ASIDE, session_id, {"created_at": time.time()}, index=False)
