"""One SQLite connection for LoCAL2's small tables (turn log, run list, arena votes).

Their queries are written once, with ``?`` parameters, in classes that only say *what* to
run (``_fetch`` and ``_write``); this mixin runs them on SQLite, and
``local2.storage._postgres.PooledSql`` runs the same statements on a Postgres pool.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self


def quick_commits(conn: sqlite3.Connection) -> None:
    """WAL with ``synchronous=NORMAL``: a commit no longer waits for the disk (the WAL is
    synced at its checkpoints). SQLite's advice for WAL: the database stays consistent, and
    only a power cut or OS crash can lose the last commits, never a crash of LoCAL2. A turn
    makes about a dozen commits (checkpoints, turn log); each fsync cost milliseconds on the
    path to the answer (``bench/overhead.py``)."""
    conn.execute("PRAGMA synchronous=NORMAL")


class SqliteSql:
    """Runs ``?``-parameter statements on one SQLite file (or ``:memory:``), thread-safely."""

    def __init__(self, path: str | Path = ":memory:", schema: str = "") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._lock = threading.Lock()
        with self._lock:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")  # readers never wait on a turn
                quick_commits(self._conn)
            self._conn.executescript(schema)
            self._conn.commit()

    @classmethod
    def beside(cls, other: SqliteSql, schema: str = "") -> Self:
        """Another set of tables in ``other``'s database, on its connection (so a query can
        join them, even in ``:memory:``); closed with ``other``."""
        this = cls.__new__(cls)
        this.path, this._conn, this._lock = other.path, other._conn, other._lock
        this.borrowed = True
        with this._lock:
            this._conn.executescript(schema)
            this._conn.commit()
        return this

    borrowed = False  # the connection is another's: closing this leaves it open

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    def _write(self, sql: str, params: Sequence[Any]) -> None:
        with self._lock:
            self._conn.execute(sql, tuple(params))
            self._conn.commit()

    def close(self) -> None:
        if self.borrowed:
            return
        with self._lock:
            self._conn.close()
