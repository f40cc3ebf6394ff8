"""The list of research runs: question, when, model, last known status.

The checkpoints hold each run's state; this small table only makes ``research list`` and
``GET /research`` cheap, without reading every run's checkpoints.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS research_runs (
    run_id TEXT PRIMARY KEY,
    question TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
)
"""


class RunIndex:
    def __init__(self, path: str | Path) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._lock = threading.Lock()
        with self._lock, self._conn:
            self._conn.execute(SCHEMA)

    def start(self, run_id: str, question: str, model: str) -> None:
        now = time.time()
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO research_runs VALUES (?, ?, ?, 'running', ?, ?) ON CONFLICT(run_id) "
                "DO UPDATE SET status='running', updated_at=excluded.updated_at",
                (run_id, question, model, now, now),
            )

    def set_status(self, run_id: str, status: str) -> None:
        with self._lock, self._conn:
            self._conn.execute(
                "UPDATE research_runs SET status=?, updated_at=? WHERE run_id=?",
                (status, time.time(), run_id),
            )

    def get(self, run_id: str) -> dict[str, Any] | None:
        rows = self._select("WHERE run_id=?", (run_id,))
        return rows[0] if rows else None

    def recent(self, limit: int = 20) -> list[dict[str, Any]]:
        return self._select("ORDER BY created_at DESC LIMIT ?", (limit,))

    def _select(self, clause: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._conn.execute(
                "SELECT run_id, question, model, status, created_at, updated_at "
                f"FROM research_runs {clause}",
                params,
            )
            names = [c[0] for c in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def close(self) -> None:
        self._conn.close()
