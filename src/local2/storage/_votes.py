"""Arena votes: one row per compared turn and voter, kept beside the turn log.

A vote names both respondents' models (their arena labels) and the winner: ``a``, ``b`` or
``tie``. The person may change their mind: their vote on a turn replaces the earlier one;
the judge votes once per turn. Votes are kept where the turn log is, so the arena spans
every session that store holds: SQLite in the checkpoint database by default, the team's
Postgres with ``system.checkpointer: postgres`` (``local2.storage._postgres``), LangGraph Server's
store when the graph runs there.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, astuple, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from local2.storage._sqlite import SqliteSql

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

Voter = Literal["person", "judge"]
VOTERS: tuple[Voter, ...] = ("person", "judge")
WINNERS = ("a", "b", "tie")

# One schema for every SQL engine; {time} and {seq} are the engine's own spellings.
SCHEMA = """
CREATE TABLE IF NOT EXISTS local2_votes (
    {seq}session_id TEXT NOT NULL,
    query_id TEXT NOT NULL,
    voter TEXT NOT NULL,
    model_a TEXT NOT NULL,
    model_b TEXT NOT NULL,
    winner TEXT NOT NULL,
    created_at {time} NOT NULL,
    UNIQUE (session_id, query_id, voter)
);
"""
SQLITE_SCHEMA = SCHEMA.format(time="REAL", seq="")  # ties are ordered by rowid
POSTGRES_SCHEMA = SCHEMA.format(time="DOUBLE PRECISION", seq="seq BIGSERIAL PRIMARY KEY,\n    ")
FIELDS = "session_id, query_id, voter, model_a, model_b, winner, created_at"
# A voter's later vote on a turn replaces the earlier one (and takes its time).
UPSERT_SQL = f"""
INSERT INTO local2_votes ({FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (session_id, query_id, voter) DO UPDATE SET model_a = excluded.model_a,
    model_b = excluded.model_b, winner = excluded.winner, created_at = excluded.created_at
"""


@dataclass(frozen=True)
class Vote:
    session_id: str
    query_id: str
    voter: str
    model_a: str
    model_b: str
    winner: str
    created_at: float

    def as_dict(self) -> dict[str, Any]:  # the vote as a LangGraph store item's value (JSON)
        return asdict(self)


class VoteLog(ABC):
    """Where votes are kept; every kind checks them the same way."""

    def record(
        self,
        *,
        session_id: str,
        query_id: str,
        voter: Voter,
        model_a: str,
        model_b: str,
        winner: str,
    ) -> Vote:
        """Store a vote, replacing this voter's earlier one on the same turn."""
        if voter not in VOTERS:
            raise ValueError(f"A voter is one of {', '.join(VOTERS)}, got {voter!r}.")
        if winner not in WINNERS:
            raise ValueError(f"A winner is one of {', '.join(WINNERS)}, got {winner!r}.")
        vote = Vote(session_id, query_id, voter, model_a, model_b, winner, time.time())
        self._put(vote)
        return vote

    @abstractmethod
    def _put(self, vote: Vote) -> None:
        """Keep ``vote`` in place of the same voter's earlier vote on the turn."""

    @abstractmethod
    def votes(self, voter: Voter | None = None) -> list[Vote]:
        """Every vote (of one voter), oldest first."""

    def close(self) -> None:  # noqa: B027 - nothing to release by default
        """Release connections."""


class SqlVoteLog(VoteLog):
    """Votes in the ``local2_votes`` table; subclasses say how a statement is run."""

    ORDER = "created_at, rowid"  # the order votes were written in

    @abstractmethod
    def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]: ...

    @abstractmethod
    def _write(self, sql: str, params: Sequence[Any]) -> None: ...

    def _put(self, vote: Vote) -> None:
        self._write(UPSERT_SQL, astuple(vote))

    def votes(self, voter: Voter | None = None) -> list[Vote]:
        where, params = ("WHERE voter = ?", (voter,)) if voter is not None else ("", ())
        sql = f"SELECT {FIELDS} FROM local2_votes {where} ORDER BY {self.ORDER}"
        return [Vote(*row) for row in self._fetch(sql, params)]


class SqliteVoteLog(SqliteSql, SqlVoteLog):
    """Votes in SQLite: the checkpoint database by default, beside the turn log."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        super().__init__(path, SQLITE_SCHEMA)


class StoreVoteLog(VoteLog):
    """Votes as items of a LangGraph store (LangGraph Server's, see ``local2.platform.graph``),
    one per turn and voter, found at call time by ``store_of``."""

    NAMESPACE = ("local2", "votes")
    PAGE = 500

    def __init__(self, store_of: Callable[[], BaseStore] | None = None) -> None:
        self._store_of = store_of

    def _store(self) -> BaseStore:
        if self._store_of is not None:
            return self._store_of()
        # _store_turn_log brings LangGraph's store (348 modules at import): Server votes only
        from local2.storage._store_turn_log import platform_store

        return platform_store()

    def _put(self, vote: Vote) -> None:
        key = json.dumps([vote.session_id, vote.query_id, vote.voter])
        self._store().put(self.NAMESPACE, key, vote.as_dict(), index=False)

    def votes(self, voter: Voter | None = None) -> list[Vote]:
        store, found, offset = self._store(), [], 0
        where = {"voter": voter} if voter is not None else None
        while page := store.search(self.NAMESPACE, filter=where, limit=self.PAGE, offset=offset):
            found += [Vote(**item.value) for item in page]
            offset += len(page)
        return sorted(found, key=lambda v: v.created_at)
