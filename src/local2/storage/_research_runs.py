"""The list of research runs: question, when, model, last known status.

The checkpoints hold each run's state; this small table only makes ``research list`` and
``GET /research`` cheap, without reading every run's checkpoints; runs set aside
(``research_runs_set_aside``: an eval run's questions) are left out of the list.
:class:`SqliteRunIndex` keeps it beside the run checkpoints in ``research.sqlite``;
``local2.storage._postgres`` keeps it on the team's Postgres server (``checkpointer:
postgres``). Both share the queries here.

Each research run's inbox: what the person says while it runs (``POST /research/{id}/steer``).

A say is a row (run id, its number in that run, kind, value, when). The run reads the rows
after the last one it applied, at each boundary between its steps
(:mod:`local2.research._planner`), and its checkpointed state says how far it has read, so a
say reaches the run in whichever process runs it, through the database they share:
``research.sqlite`` beside the run checkpoints, or the team's Postgres. Rows are never
changed or removed while the run lives.
"""

from __future__ import annotations

import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

from local2.contracts import SteerRecord
from local2.storage._sqlite import SqliteSql

COLUMNS = ("run_id", "question", "model", "status", "created_at", "updated_at", "owner")


class RunRow(TypedDict):
    """One run in the index: its question, model and status, when, and whose."""

    run_id: str
    question: str
    model: str
    status: str
    created_at: float
    updated_at: float
    owner: str


SCHEMA = """
CREATE TABLE IF NOT EXISTS research_runs (
    run_id TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    created_at {time} NOT NULL,
    updated_at {time} NOT NULL
);
CREATE TABLE IF NOT EXISTS research_runs_set_aside (
    run_id TEXT PRIMARY KEY,
    created_at {time} NOT NULL
)
"""
# The runs listed: not those set aside (an eval run's questions, reached through its results).
LISTED = "run_id NOT IN (SELECT run_id FROM research_runs_set_aside)"
SQLITE_SCHEMA = SCHEMA.format(time="REAL")
POSTGRES_SCHEMA = SCHEMA.format(time="DOUBLE PRECISION")
# Whose each run is (runs from before people were configured are local's).
OWNER_COLUMN = "ALTER TABLE research_runs ADD COLUMN {exists}owner TEXT NOT NULL DEFAULT 'local'"
OWNER_COLUMN_POSTGRES = OWNER_COLUMN.format(exists="IF NOT EXISTS ")


class RunIndex(ABC):
    """The runs table; subclasses say how a statement reaches the database (``?`` params)."""

    @abstractmethod
    def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]: ...

    @abstractmethod
    def _write(self, sql: str, params: Sequence[Any]) -> None: ...

    def start(self, run_id: str, question: str, model: str, owner: str = "local") -> None:
        now = time.time()
        self._write(
            f"INSERT INTO research_runs ({', '.join(COLUMNS)}) VALUES (?, ?, ?, 'running', ?, ?, ?)"
            " ON CONFLICT(run_id) DO UPDATE SET status='running', updated_at=excluded.updated_at",
            (run_id, question, model, now, now, owner),
        )

    def set_status(self, run_id: str, status: str) -> None:
        self._write(
            "UPDATE research_runs SET status=?, updated_at=? WHERE run_id=?",
            (status, time.time(), run_id),
        )

    def get(self, run_id: str) -> RunRow | None:
        rows = self._select("WHERE run_id=?", (run_id,))
        return rows[0] if rows else None

    def recent(self, limit: int = 20, owner: str | None = None) -> list[RunRow]:
        """The newest runs (only ``owner``'s when given), none :meth:`set_aside`."""
        if owner is None:
            return self._select(f"WHERE {LISTED} ORDER BY created_at DESC LIMIT ?", (limit,))
        return self._select(
            f"WHERE owner=? AND {LISTED} ORDER BY created_at DESC LIMIT ?", (owner, limit)
        )

    def set_aside(self, run_id: str) -> None:
        """Keep ``run_id`` out of :meth:`recent` (an eval run's question, not the person's
        research); it is kept, and opens by its id as any other."""
        self._write(
            "INSERT INTO research_runs_set_aside (run_id, created_at) VALUES (?, ?) "
            "ON CONFLICT (run_id) DO NOTHING",
            (run_id, time.time()),
        )

    def _select(self, clause: str, params: tuple[Any, ...]) -> list[RunRow]:
        rows = self._fetch(f"SELECT {', '.join(COLUMNS)} FROM research_runs {clause}", params)
        return [
            {
                "run_id": run_id,
                "question": question,
                "model": model,
                "status": status,
                "created_at": created_at,
                "updated_at": updated_at,
                "owner": owner,
            }
            for run_id, question, model, status, created_at, updated_at, owner in rows
        ]


class SqliteRunIndex(SqliteSql, RunIndex):
    """The runs table beside the run checkpoints (``research.sqlite``)."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, SQLITE_SCHEMA)
        try:  # a table from before owners
            self._write(OWNER_COLUMN.format(exists=""), ())
        except sqlite3.OperationalError as exc:
            if "duplicate column" not in str(exc):
                raise


STEERS_TABLE = """
CREATE TABLE IF NOT EXISTS research_steers (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    at {time} NOT NULL,
    PRIMARY KEY (run_id, seq)
)
"""
SQLITE_STEERS = STEERS_TABLE.format(time="REAL")
POSTGRES_STEERS = STEERS_TABLE.format(time="DOUBLE PRECISION")
_TRIES = 8  # two processes numbering a say of one run at once: the later one tries again


class SteerInbox(ABC):
    """The says of every run; subclasses say how a statement reaches the database."""

    @abstractmethod
    def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]: ...

    @abstractmethod
    def _write(self, sql: str, params: Sequence[Any]) -> None: ...

    def put(self, run_id: str, kind: str, value: str) -> SteerRecord:
        """File a say for ``run_id``; its number is one more than the run's last."""
        for _ in range(_TRIES):
            rows = self._fetch(
                "SELECT COALESCE(MAX(seq), 0) FROM research_steers WHERE run_id=?", (run_id,)
            )
            seq = int(rows[0][0]) + 1
            at = time.time()
            try:
                self._write(
                    "INSERT INTO research_steers (run_id, seq, kind, value, at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (run_id, seq, kind, value, at),
                )
            except Exception as exc:  # the same number taken meanwhile: number it again
                if not _taken(exc):
                    raise
                continue
            return {"run_id": run_id, "seq": seq, "kind": kind, "value": value, "at": at}
        raise RuntimeError(f"could not file a say for run {run_id}: too many at once")

    def since(self, run_id: str, seq: int) -> list[SteerRecord]:
        """The run's says after number ``seq``, oldest first."""
        rows = self._fetch(
            "SELECT seq, kind, value, at FROM research_steers WHERE run_id=? AND seq>? "
            "ORDER BY seq",
            (run_id, seq),
        )
        return [
            {"run_id": run_id, "seq": int(r[0]), "kind": str(r[1]), "value": str(r[2]), "at": r[3]}
            for r in rows
        ]


def _taken(exc: Exception) -> bool:
    if isinstance(exc, sqlite3.IntegrityError):
        return True
    return type(exc).__name__ in ("UniqueViolation", "IntegrityError")


class SqliteSteerInbox(SqliteSql, SteerInbox):
    """The inbox beside the run list in ``research.sqlite`` (opened with :meth:`beside`)."""
