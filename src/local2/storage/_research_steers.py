"""Each research run's inbox: what the person says while it runs (``POST /research/{id}/steer``).

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
from typing import Any

from local2.contracts import SteerRecord
from local2.storage._sqlite import SqliteSql

SCHEMA = """
CREATE TABLE IF NOT EXISTS research_steers (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    at {time} NOT NULL,
    PRIMARY KEY (run_id, seq)
)
"""
SQLITE_SCHEMA = SCHEMA.format(time="REAL")
POSTGRES_SCHEMA = SCHEMA.format(time="DOUBLE PRECISION")
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
