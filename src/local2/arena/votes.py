"""Arena votes: one row per compared turn and voter, kept beside the turn log.

A vote names both respondents' models (their arena labels) and the winner: ``a``, ``b`` or
``tie``. The person may change their mind: their vote on a turn replaces the earlier one;
the judge votes once per turn. SQLite in the checkpoint database by default (the same file
as the turn log), so the arena spans every session of a data directory.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from local2.config import Settings

Voter = Literal["person", "judge"]
VOTERS: tuple[Voter, ...] = ("person", "judge")
WINNERS = ("a", "b", "tie")

SCHEMA = """
CREATE TABLE IF NOT EXISTS local2_votes (
    session_id TEXT NOT NULL,
    query_id TEXT NOT NULL,
    voter TEXT NOT NULL,
    model_a TEXT NOT NULL,
    model_b TEXT NOT NULL,
    winner TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (session_id, query_id, voter)
);
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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class VoteLog:
    """Votes in SQLite; safe to share between threads."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._lock = threading.Lock()
        with self._lock:
            self._conn.executescript(SCHEMA)
            self._conn.commit()

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
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO local2_votes VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, query_id, voter, model_a, model_b, winner, vote.created_at),
            )
            self._conn.commit()
        return vote

    def votes(self, voter: Voter | None = None) -> list[Vote]:
        """Every vote (of one voter), oldest first."""
        sql = "SELECT * FROM local2_votes"
        params: tuple[Any, ...] = ()
        if voter is not None:
            sql += " WHERE voter = ?"
            params = (voter,)
        with self._lock:
            rows = self._conn.execute(sql + " ORDER BY created_at, rowid", params).fetchall()
        return [Vote(*row) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def votes_path(settings: Settings) -> str | Path:
    """Where votes live: the checkpoint database (in memory when checkpoints are)."""
    if settings.system.checkpointer == "memory":
        return ":memory:"
    return settings.system.checkpoint_path or settings.data_dir / "checkpoints.sqlite"


def open_votes(settings: Settings) -> VoteLog:
    return VoteLog(votes_path(settings))
