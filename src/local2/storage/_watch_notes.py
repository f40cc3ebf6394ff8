"""What a watch told its person: a notice per run (the app's list with unread marks, the
person's Atom feed) and a delivery record per attempt to send it through Apprise.

A notice's id is its run's (watch and due time), so a run taken over from a process that
died and run again still leaves one notice. A delivery's ``target`` is the Apprise URL as
``url(privacy=True)`` shows it: its secrets are never stored here. A person's feed token is
kept as a record that holds no token (a nonce and a hash: ``local2.service.watches._feed``).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, TypedDict

NOTES_SCHEMA = """
CREATE TABLE IF NOT EXISTS local2_watch_deliveries (
    watch_id TEXT NOT NULL,
    due {time} NOT NULL,
    target TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    error TEXT,
    at {time} NOT NULL
);
CREATE INDEX IF NOT EXISTS local2_watch_deliveries_watch ON local2_watch_deliveries (watch_id, at);
CREATE TABLE IF NOT EXISTS local2_watch_notices (
    notice_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    watch_id TEXT NOT NULL,
    due {time} NOT NULL,
    run_id TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at {time} NOT NULL,
    read_at {time}
);
CREATE INDEX IF NOT EXISTS local2_watch_notices_owner ON local2_watch_notices (owner, created_at);
CREATE TABLE IF NOT EXISTS local2_watch_feeds (
    owner TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at {time} NOT NULL
);
"""
NOTICE_FIELDS = "notice_id, owner, watch_id, due, run_id, title, body, created_at, read_at"
DELIVERY_FIELDS = "watch_id, due, target, attempt, ok, error, at"


class DeliveryRow(TypedDict):
    """One attempt to send a run's notice to one target (redacted)."""

    watch_id: str
    due: float
    target: str  # url(privacy=True): secrets masked
    attempt: int
    ok: bool
    error: str | None
    at: float


class NoticeRow(TypedDict):
    """A run's notice to its person: what changed, in a title and a body; unread until read."""

    notice_id: str
    owner: str
    watch_id: str
    due: float
    run_id: str
    title: str
    body: str
    created_at: float
    read_at: float | None


class WatchNotes(ABC):
    """Notices and delivery records, beside the watches (same database, same statements)."""

    NOTE_TABLES = ("local2_watch_deliveries", "local2_watch_notices")
    NOTES_SQLITE_SCHEMA = NOTES_SCHEMA.format(time="REAL")
    NOTES_POSTGRES_SCHEMA = NOTES_SCHEMA.format(time="DOUBLE PRECISION")

    @abstractmethod
    def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]: ...

    @abstractmethod
    def _write(self, sql: str, params: Sequence[Any]) -> None: ...

    def record_delivery(self, row: DeliveryRow) -> None:
        values = [row[k] for k in DeliveryRow.__annotations__]  # type: ignore[literal-required]  # the row's own keys, in order
        values[4] = int(row["ok"])
        self._write(
            f"INSERT INTO local2_watch_deliveries ({DELIVERY_FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            values,
        )

    def deliveries(self, watch_id: str, limit: int = 50) -> list[DeliveryRow]:
        """The watch's delivery attempts, newest first."""
        rows = self._fetch(
            f"SELECT {DELIVERY_FIELDS} FROM local2_watch_deliveries WHERE watch_id=? "
            "ORDER BY at DESC, attempt DESC LIMIT ?",
            (watch_id, limit),
        )
        return [
            {
                "watch_id": w,
                "due": due,
                "target": target,
                "attempt": attempt,
                "ok": bool(ok),
                "error": error,
                "at": at,
            }
            for w, due, target, attempt, ok, error, at in rows
        ]

    def delivered(self, watch_id: str, due: float) -> set[str]:
        """The targets (redacted) a due time's notice already reached."""
        rows = self._fetch(
            "SELECT DISTINCT target FROM local2_watch_deliveries WHERE watch_id=? AND due=? "
            "AND ok=1",
            (watch_id, due),
        )
        return {str(r[0]) for r in rows}

    def add_notice(self, row: NoticeRow) -> bool:
        """Keep the run's notice; False if that run already left one (a run taken over)."""
        before = self._fetch(
            "SELECT 1 FROM local2_watch_notices WHERE notice_id=?", (row["notice_id"],)
        )
        self._write(
            f"INSERT INTO local2_watch_notices ({NOTICE_FIELDS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (notice_id) DO NOTHING",
            [row[k] for k in NoticeRow.__annotations__],  # type: ignore[literal-required]  # the row's own keys, in order
        )
        return not before

    def notices(self, owner: str, limit: int = 50, unread: bool = False) -> list[NoticeRow]:
        """``owner``'s notices, newest first (only the unread ones with ``unread``)."""
        where = "owner=? AND read_at IS NULL" if unread else "owner=?"
        rows = self._fetch(
            f"SELECT {NOTICE_FIELDS} FROM local2_watch_notices WHERE {where} "
            "ORDER BY created_at DESC, notice_id LIMIT ?",
            (owner, limit),
        )
        return [dict(zip(NoticeRow.__annotations__, r, strict=True)) for r in rows]  # type: ignore[misc]  # built from the row's own keys

    def feed_secret(self, owner: str, new: str) -> str:
        """``owner``'s feed token's record: the one kept, or ``new`` kept now if there is none
        (the first process to ask keeps its own; every other one reads it back)."""
        self._write(
            "INSERT INTO local2_watch_feeds (owner, secret, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT (owner) DO NOTHING",
            (owner, new, time.time()),
        )
        kept = self.kept_feed_secret(owner)
        assert kept is not None  # kept just now, or before
        return kept

    def kept_feed_secret(self, owner: str) -> str | None:
        rows = self._fetch("SELECT secret FROM local2_watch_feeds WHERE owner=?", (owner,))
        return str(rows[0][0]) if rows else None

    def forget_feed_secret(self, owner: str) -> None:
        """The feed's address made void: the next one asked for has a new secret."""
        self._write("DELETE FROM local2_watch_feeds WHERE owner=?", (owner,))

    def forget_feed_secrets_unlike(self, prefix: str) -> list[str]:
        """Void every kept record that does not start with ``prefix`` (an older store's, which
        held the secret itself); whose they were."""
        rows = self._fetch(
            "SELECT owner FROM local2_watch_feeds WHERE secret NOT LIKE ?", (prefix + "%",)
        )
        owners = sorted(str(r[0]) for r in rows)
        for owner in owners:
            self._write(
                "DELETE FROM local2_watch_feeds WHERE owner=? AND secret NOT LIKE ?",
                (owner, prefix + "%"),
            )
        return owners

    def mark_read(self, owner: str, notice_ids: Sequence[str]) -> None:
        """Mark ``owner``'s notices read (another's ids are left alone)."""
        now = time.time()
        for notice_id in notice_ids:
            self._write(
                "UPDATE local2_watch_notices SET read_at=? "
                "WHERE notice_id=? AND owner=? AND read_at IS NULL",
                (now, notice_id, owner),
            )
