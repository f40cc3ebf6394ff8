"""The conversation as an append-only log of clean turns, behind one small interface.

LangGraph's checkpointers serialise every channel at every super-step, so a conversation
kept in state costs O(N^2) storage. Instead each answered turn is written once here, as a
row that points at the turn before it, and the graph state keeps only the id of the last
turn it can see (``history_head``). A fork appends a row whose parent is an older turn, so
branches share their common past and nothing is ever rewritten. Reading the window for a
prompt follows at most ``max_turns`` parent links, in one recursive query.

Implementations: :class:`SqliteTurnLog` (the default, in the checkpoint file),
``local2.storage._postgres.PostgresTurnLog`` (a team server) and
``local2.storage._store_turn_log.StoreTurnLog`` (LangGraph Server's own store). The SQL ones
share their queries here.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import astuple, dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from local2.contracts import SessionSummary, TurnRecord
from local2.storage._sqlite import SqliteSql

TURN_COLUMNS = 'id, parent_id, session_id, query_id, "user", assistant, created_at'

# One schema for every SQL turn log; {time} and {seq} are the engine's own spellings.
TURNS_SCHEMA = """
CREATE TABLE IF NOT EXISTS local2_turns (
    id TEXT PRIMARY KEY,
    parent_id TEXT,
    session_id TEXT NOT NULL,
    query_id TEXT NOT NULL,
    "user" TEXT NOT NULL,
    assistant TEXT NOT NULL,
    created_at {time} NOT NULL,
    record TEXT
);
CREATE INDEX IF NOT EXISTS local2_turns_session ON local2_turns (session_id, created_at);
CREATE INDEX IF NOT EXISTS local2_turns_query ON local2_turns (session_id, query_id);
CREATE TABLE IF NOT EXISTS local2_turn_notes (
    {seq}turn_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at {time} NOT NULL
);
CREATE INDEX IF NOT EXISTS local2_turn_notes_turn ON local2_turn_notes (turn_id, created_at);
CREATE TABLE IF NOT EXISTS local2_session_owners (
    session_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    created_at {time} NOT NULL
);
CREATE INDEX IF NOT EXISTS local2_session_owners_owner ON local2_session_owners (owner);
CREATE TABLE IF NOT EXISTS local2_eval_sessions (
    session_id TEXT PRIMARY KEY,
    created_at {time} NOT NULL
);
"""
SQLITE_SCHEMA = TURNS_SCHEMA.format(time="REAL", seq="")  # notes are ordered by rowid
POSTGRES_SCHEMA = TURNS_SCHEMA.format(
    time="DOUBLE PRECISION", seq="seq BIGSERIAL PRIMARY KEY,\n    "
)

# The last `depth` turns ending at a head, newest first: one round trip however long.
WINDOW_SQL = f"""
WITH RECURSIVE chain({TURN_COLUMNS}, record, depth) AS (
    SELECT {TURN_COLUMNS}, {{record}}, 1 FROM local2_turns WHERE id = ?
    UNION ALL
    SELECT t.id, t.parent_id, t.session_id, t.query_id, t."user", t.assistant, t.created_at,
           {{t_record}}, c.depth + 1
    FROM local2_turns t JOIN chain c ON t.id = c.parent_id
    WHERE c.depth < ?
)
SELECT {TURN_COLUMNS}, record FROM chain ORDER BY depth DESC
"""
WINDOW_PLAIN_SQL = WINDOW_SQL.format(record="NULL", t_record="NULL")  # prompts never need it
WINDOW_RECORDS_SQL = WINDOW_SQL.format(record="record", t_record="t.record")

FIND_SQL = f"""
SELECT {TURN_COLUMNS}, record FROM local2_turns WHERE session_id = ? AND query_id = ?
ORDER BY created_at DESC LIMIT 1
"""

# The person's conversations: an eval run's sessions are set aside (local2_eval_sessions).
SESSIONS_SQL = """
SELECT t.session_id, COUNT(*), MIN(t.created_at), MAX(t.created_at),
       (SELECT t2."user" FROM local2_turns t2 WHERE t2.session_id = t.session_id
        ORDER BY t2.created_at LIMIT 1)
FROM local2_turns t {owners}
WHERE NOT EXISTS (SELECT 1 FROM local2_eval_sessions e WHERE e.session_id = t.session_id)
{owned} GROUP BY t.session_id ORDER BY MAX(t.created_at) DESC LIMIT ?
"""
# A session with no owner row is local's (see local2.storage._people).
OWNERS = "LEFT JOIN local2_session_owners o ON o.session_id = t.session_id"
OWNED_BY = "AND COALESCE(o.owner, 'local') = ?"
SET_ASIDE_SQL = (
    "INSERT INTO local2_eval_sessions (session_id, created_at) VALUES (?, ?) "
    "ON CONFLICT (session_id) DO NOTHING"
)

INSERT_SQL = f"INSERT INTO local2_turns ({TURN_COLUMNS}, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


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
    record: TurnRecord | None = None


def turn_of(row: Sequence[Any]) -> Turn:
    """A turn from its row: the seven columns of ``Turn``, then its record as JSON (or NULL)."""
    record = json.loads(row[7]) if len(row) > 7 and row[7] else None
    return Turn(row[0], row[1], row[2], row[3], row[4], row[5], row[6], record)


class TurnLog(ABC):
    """Append-only clean turns: what every storage engine must offer the graph and the agent."""

    def append(
        self,
        *,
        parent_id: str | None,
        session_id: str,
        query_id: str,
        user: str,
        assistant: str,
        record: TurnRecord | None = None,
    ) -> str:
        """Store one turn after ``parent_id``; returns the new turn's id (the new head)."""
        turn = Turn(
            new_turn_id(), parent_id, session_id, query_id, user, assistant, time.time(), record
        )
        self._insert(turn)
        return turn.id

    @abstractmethod
    def _insert(self, turn: Turn) -> None:
        """Write one new turn."""

    @abstractmethod
    def window(self, head: str | None, max_turns: int, *, records: bool = False) -> list[Turn]:
        """The last ``max_turns`` turns ending at ``head``, oldest first.

        ``records``: also read each turn's record (its payload: thinking, tool calls, memory
        hits, events), which prompts never need.
        """

    @abstractmethod
    def note(self, turn_id: str, kind: str, value: Any) -> None:
        """Add what was learned about a turn after it was answered (its grade, a rating).

        Notes are appended, never rewritten; the newest of each kind counts.
        """

    @abstractmethod
    # {turn_id: {kind: value}}: each value the JSON note() was given, read back
    def notes(self, turn_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The newest note of each kind for each of ``turn_ids``: ``{turn_id: {kind: value}}``."""

    @abstractmethod
    def find(self, session_id: str, query_id: str) -> Turn | None:
        """The turn that answered ``query_id`` in ``session_id`` (the latest, if replayed)."""

    @abstractmethod
    def sessions(self, limit: int = 20, owner: str | None = None) -> list[SessionSummary]:
        """Recent sessions: ``session_id, turns, started_at, updated_at, first`` (question);
        only ``owner``'s when given; never a session :meth:`set_aside`."""

    @abstractmethod
    def set_aside(self, session_id: str) -> None:
        """Keep ``session_id`` out of :meth:`sessions` (an eval run's question, not one of
        the person's conversations); its turns stay, and it opens by its id as any other."""

    def close(self) -> None:  # noqa: B027 - nothing to release by default
        """Release connections."""


def new_turn_id() -> str:
    return uuid.uuid4().hex


def encode_record(record: TurnRecord | None) -> str | None:
    return json.dumps(record, default=str) if record is not None else None


def session_row(row: Sequence[Any]) -> SessionSummary:
    session_id, turns, started_at, updated_at, first = row
    return {
        "session_id": session_id,
        "turns": turns,
        "started_at": started_at,
        "updated_at": updated_at,
        "first": first,
    }


class WindowCache:
    """Prompt windows (turns without records) already read, by head and length.

    Turns are never changed or deleted, so a window ending at a given turn never changes,
    and a turn written here extends its parent's window: the next turn's prompt then needs
    no query (the history window was ~0.5 ms of each turn's path to the answer).
    """

    SIZE = 64  # windows kept (the least recently used goes first)

    def __init__(self) -> None:
        self._windows: OrderedDict[tuple[str, int], tuple[Turn, ...]] = OrderedDict()
        self._guard = threading.Lock()

    def get(self, head: str, max_turns: int) -> list[Turn] | None:
        with self._guard:
            found = self._windows.get((head, max_turns))
            if found is not None:
                self._windows.move_to_end((head, max_turns))
        return list(found) if found is not None else None

    def put(self, head: str, max_turns: int, turns: Sequence[Turn]) -> None:
        with self._guard:
            self._windows[(head, max_turns)] = tuple(turns)
            while len(self._windows) > self.SIZE:
                self._windows.popitem(last=False)

    def extend(self, turn: Turn) -> None:
        """``turn`` was just written: its window is its parent's and then itself."""
        if turn.parent_id is None:
            return
        plain = replace(turn, record=None)
        with self._guard:
            lengths = [m for (head, m) in self._windows if head == turn.parent_id]
        for m in lengths:
            parent = self.get(turn.parent_id, m)
            if parent is not None:
                self.put(turn.id, m, [*parent, plain][-m:])


class SqlTurnLog(TurnLog):
    """The turn log over a DB-API database; subclasses say how to run a statement."""

    @abstractmethod
    def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        """Run a query written with ``?`` placeholders and return its rows."""

    @abstractmethod
    def _write(self, sql: str, params: Sequence[Any]) -> None:
        """Run one statement written with ``?`` placeholders and commit it."""

    def _insert(self, turn: Turn) -> None:
        self._write(INSERT_SQL, (*astuple(turn)[:7], encode_record(turn.record)))
        self._windows.extend(turn)

    NOTE_ORDER = "created_at, rowid"  # the order notes were written in

    @cached_property
    def _windows(self) -> WindowCache:
        return WindowCache()

    def window(self, head: str | None, max_turns: int, *, records: bool = False) -> list[Turn]:
        if head is None or max_turns < 1:
            return []
        if not records and (known := self._windows.get(head, max_turns)) is not None:
            return known
        sql = WINDOW_RECORDS_SQL if records else WINDOW_PLAIN_SQL
        turns = [turn_of(row) for row in self._fetch(sql, (head, max_turns))]
        if not records:
            self._windows.put(head, max_turns, turns)
        return turns

    def note(self, turn_id: str, kind: str, value: Any) -> None:
        self._write(
            "INSERT INTO local2_turn_notes (turn_id, kind, value, created_at) VALUES (?, ?, ?, ?)",
            (turn_id, kind, json.dumps(value, default=str), time.time()),
        )

    def notes(self, turn_ids: list[str]) -> dict[str, dict[str, Any]]:  # JSON read back
        found: dict[str, dict[str, Any]] = {}  # {turn_id: {kind: value}}, as note() kept them
        for start in range(0, len(turn_ids), 500):
            chunk = turn_ids[start : start + 500]
            rows = self._fetch(
                "SELECT turn_id, kind, value FROM local2_turn_notes WHERE turn_id IN "
                f"({', '.join('?' * len(chunk))}) ORDER BY {self.NOTE_ORDER}",
                chunk,
            )
            for turn_id, kind, value in rows:
                found.setdefault(turn_id, {})[kind] = json.loads(value)
        return found

    def find(self, session_id: str, query_id: str) -> Turn | None:
        rows = self._fetch(FIND_SQL, (session_id, query_id))
        if not rows:
            return None
        row = rows[0]
        return turn_of(row)

    def sessions(self, limit: int = 20, owner: str | None = None) -> list[SessionSummary]:
        if owner is None:
            rows = self._fetch(SESSIONS_SQL.format(owners="", owned=""), (limit,))
        else:
            sql = SESSIONS_SQL.format(owners=OWNERS, owned=OWNED_BY)
            rows = self._fetch(sql, (owner, limit))
        return [session_row(r) for r in rows]

    def set_aside(self, session_id: str) -> None:
        self._write(SET_ASIDE_SQL, (session_id, time.time()))


class SqliteTurnLog(SqliteSql, SqlTurnLog):
    """The turn log in SQLite (the checkpoint database by default)."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        super().__init__(path, SQLITE_SCHEMA)
