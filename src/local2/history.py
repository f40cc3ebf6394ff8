"""The conversation as an append-only log of clean turns.

LangGraph's SQLite saver serialises every channel at every super-step, so a conversation
kept in state costs O(N^2) storage. Instead each answered turn is written once here, as a
row that points at the turn before it, and the graph state keeps only the id of the last
turn it can see (``history_head``). A fork appends a row whose parent is an older turn, so
branches share their common past and nothing is ever rewritten. Reading the window for a
prompt walks at most ``max_turns`` parent links.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS local2_turns (
    id TEXT PRIMARY KEY,
    parent_id TEXT,
    session_id TEXT NOT NULL,
    query_id TEXT NOT NULL,
    user TEXT NOT NULL,
    assistant TEXT NOT NULL,
    created_at REAL NOT NULL,
    record TEXT
);
CREATE INDEX IF NOT EXISTS local2_turns_session ON local2_turns (session_id, created_at);
CREATE INDEX IF NOT EXISTS local2_turns_query ON local2_turns (session_id, query_id);
CREATE TABLE IF NOT EXISTS local2_turn_notes (
    turn_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS local2_turn_notes_turn ON local2_turn_notes (turn_id, created_at);
"""


@dataclass(frozen=True)
class Turn:
    """One clean exchange: what the person asked and what was answered (no thinking)."""

    id: str
    parent_id: str | None
    session_id: str
    query_id: str
    user: str
    assistant: str
    created_at: float
    record: dict[str, Any] | None = None


class TurnLog:
    """Append-only turns in SQLite (the checkpoint database by default)."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(SCHEMA)
            self._conn.commit()

    def append(
        self,
        *,
        parent_id: str | None,
        session_id: str,
        query_id: str,
        user: str,
        assistant: str,
        record: dict[str, Any] | None = None,
    ) -> str:
        turn_id = uuid.uuid4().hex
        with self._lock:
            self._conn.execute(
                "INSERT INTO local2_turns VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    turn_id,
                    parent_id,
                    session_id,
                    query_id,
                    user,
                    assistant,
                    time.time(),
                    json.dumps(record, default=str) if record is not None else None,
                ),
            )
            self._conn.commit()
        return turn_id

    def window(self, head: str | None, max_turns: int, *, records: bool = False) -> list[Turn]:
        """The last ``max_turns`` turns ending at ``head``, oldest first.

        ``records``: also read each turn's record (its payload: thinking, tool calls, memory
        hits, events), which prompts never need.
        """
        turns: list[Turn] = []
        current = head
        columns = "id, parent_id, session_id, query_id, user, assistant, created_at"
        if records:
            columns += ", record"
        with self._lock:
            while current is not None and len(turns) < max_turns:
                row = self._conn.execute(
                    f"SELECT {columns} FROM local2_turns WHERE id = ?", (current,)
                ).fetchone()
                if row is None:
                    break
                record = json.loads(row[7]) if records and row[7] else None
                turns.append(Turn(*row[:7], record=record))
                current = row[1]
        turns.reverse()
        return turns

    def note(self, turn_id: str, kind: str, value: Any) -> None:
        """Add what was learned about a turn after it was answered (its grade, a rating).

        Notes are appended, never rewritten; the newest of each kind counts.
        """
        with self._lock:
            self._conn.execute(
                "INSERT INTO local2_turn_notes VALUES (?, ?, ?, ?)",
                (turn_id, kind, json.dumps(value, default=str), time.time()),
            )
            self._conn.commit()

    def notes(self, turn_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The newest note of each kind for each of ``turn_ids``: ``{turn_id: {kind: value}}``."""
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            for start in range(0, len(turn_ids), 500):
                chunk = turn_ids[start : start + 500]
                rows = self._conn.execute(
                    "SELECT turn_id, kind, value FROM local2_turn_notes WHERE turn_id IN "
                    f"({', '.join('?' * len(chunk))}) ORDER BY created_at, rowid",
                    chunk,
                ).fetchall()
                for turn_id, kind, value in rows:
                    found.setdefault(turn_id, {})[kind] = json.loads(value)
        return found

    def find(self, session_id: str, query_id: str) -> Turn | None:
        """The turn that answered ``query_id`` in ``session_id`` (the latest, if replayed)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT id, parent_id, session_id, query_id, user, assistant, created_at, record "
                "FROM local2_turns WHERE session_id = ? AND query_id = ? "
                "ORDER BY created_at DESC LIMIT 1",
                (session_id, query_id),
            ).fetchone()
        if row is None:
            return None
        return Turn(*row[:7], record=json.loads(row[7]) if row[7] else None)

    def sessions(self, limit: int = 20) -> list[dict[str, Any]]:
        """Recent sessions with their turn count and first question."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT session_id, COUNT(*), MIN(created_at), MAX(created_at), "
                "(SELECT user FROM local2_turns t2 WHERE t2.session_id = t.session_id "
                " ORDER BY created_at LIMIT 1) "
                "FROM local2_turns t GROUP BY session_id ORDER BY MAX(created_at) DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            {
                "session_id": r[0],
                "turns": r[1],
                "started_at": r[2],
                "updated_at": r[3],
                "first": r[4],
            }
            for r in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
