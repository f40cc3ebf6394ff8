"""Watches: questions researched again on a schedule, their due runs, deliveries and notices.

The table of watches is the one clock every process agrees on: each watch holds its
``next_due`` (epoch seconds). A process that finds a watch due *claims* that due time with
one transaction: the conditional ``UPDATE … SET next_due = <the next one> WHERE next_due =
<the due one>`` and the run's row, together. Only one process's update can change the row
(on Postgres a second waits for the first and then finds ``next_due`` moved; on SQLite
``BEGIN IMMEDIATE`` lets one writer in at a time), so each due time runs once, however many
processes look. The claimed run holds a lease it renews while it runs; a run whose lease ran
out (its process died) is taken over by another conditional update, so nothing is lost and
the next due time, already set, is not doubled. After downtime the claim sets ``next_due`` to
the first time after *now*: the missed times make one catch-up run.

No scheduler's job store is shared (APScheduler 3's user guide: they "must never be shared"): each
process's scheduler only decides *when to look*; this table decides *who runs*.
:class:`SqliteWatchStore` keeps it in ``watches.sqlite``; ``watch_postgres.py`` on the team's
Postgres. The queries here serve both (``?`` parameters).
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

from local2.storage._sqlite import SqliteSql
from local2.storage._watch_notes import WatchNotes

SCHEMA = """
CREATE TABLE IF NOT EXISTS local2_watches (
    watch_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    question TEXT NOT NULL,
    schedule TEXT NOT NULL,
    timezone TEXT NOT NULL,
    anchor {time} NOT NULL,
    options TEXT NOT NULL,
    targets TEXT NOT NULL,
    notify_on TEXT NOT NULL,
    paused INTEGER NOT NULL DEFAULT 0,
    next_due {time},
    created_at {time} NOT NULL,
    updated_at {time} NOT NULL
);
CREATE INDEX IF NOT EXISTS local2_watches_due ON local2_watches (next_due);
CREATE INDEX IF NOT EXISTS local2_watches_owner ON local2_watches (owner, created_at);
CREATE TABLE IF NOT EXISTS local2_watch_runs (
    watch_id TEXT NOT NULL,
    due {time} NOT NULL,
    run_id TEXT NOT NULL,
    status TEXT NOT NULL,
    claimed_by TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    lease_until {time} NOT NULL,
    started_at {time} NOT NULL,
    finished_at {time},
    error TEXT,
    summary TEXT,
    PRIMARY KEY (watch_id, due)
);
CREATE INDEX IF NOT EXISTS local2_watch_runs_lease ON local2_watch_runs (status, lease_until);
"""
SQLITE_SCHEMA = SCHEMA.format(time="REAL")
POSTGRES_SCHEMA = SCHEMA.format(time="DOUBLE PRECISION")
WATCH_FIELDS = (
    "watch_id, owner, question, schedule, timezone, anchor, options, targets, notify_on, "
    "paused, next_due, created_at, updated_at"
)
RUN_FIELDS = (
    "watch_id, due, run_id, status, claimed_by, attempts, lease_until, started_at, "
    "finished_at, error, summary"
)
RUNNING, DONE, FAILED = "running", "done", "failed"
Step = tuple[str, Sequence[Any]]  # one statement and its parameters


class WatchRow(TypedDict):
    """A watch as stored. ``targets`` are Apprise URLs with their secrets: never shown (the
    surfaces show each one's ``url(privacy=True)``)."""

    watch_id: str
    owner: str
    question: str
    schedule: str  # as the person wrote it: "every Monday 07:00", a cron line, "6h"
    timezone: str
    anchor: float  # an interval's due times count from here
    options: dict[str, Any]  # the run's options, JSON the surfaces checked (sources, rounds, keep)
    targets: list[str]
    notify_on: str  # changes | always | never
    paused: bool
    next_due: float | None
    created_at: float
    updated_at: float


class WatchRunRow(TypedDict):
    """One due time of a watch and its run: who claimed it, until when, how it ended."""

    watch_id: str
    due: float
    run_id: str
    status: str  # running | done | failed
    claimed_by: str
    attempts: int  # how many processes took it on (more than one: one died running it)
    lease_until: float
    started_at: float
    finished_at: float | None
    error: str | None
    summary: dict[str, Any] | None  # what changed (contracts.watch.WhatChanged), as JSON


class WatchStore(WatchNotes, ABC):
    """The watches and their runs; subclasses say how statements reach the database."""

    @abstractmethod
    def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]: ...

    @abstractmethod
    def _write(self, sql: str, params: Sequence[Any]) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _all_or_nothing(self, steps: Sequence[Step], then: Sequence[Step] = ()) -> bool:
        """Run ``steps``, then ``then``, in one transaction; if one of ``steps`` changes
        other than one row, undo all and return False."""

    # -- the watches --------------------------------------------------------------------

    def add(self, row: WatchRow) -> None:
        values = [row[k] for k in WatchRow.__annotations__]  # type: ignore[literal-required]  # the row's own keys, in order
        values[6], values[7] = json.dumps(row["options"]), json.dumps(row["targets"])
        values[9] = int(row["paused"])
        marks = ", ".join("?" * len(values))
        self._write(f"INSERT INTO local2_watches ({WATCH_FIELDS}) VALUES ({marks})", values)

    def get(self, watch_id: str, owner: str | None = None) -> WatchRow | None:
        """The watch, or None if there is none, or it is not ``owner``'s (when given)."""
        if owner is None:
            rows = self._watches("WHERE watch_id=?", (watch_id,))
        else:
            rows = self._watches("WHERE watch_id=? AND owner=?", (watch_id, owner))
        return rows[0] if rows else None

    def owned_by(self, owner: str) -> list[WatchRow]:
        return self._watches("WHERE owner=? ORDER BY created_at, watch_id", (owner,))

    def count(self, owner: str) -> int:
        return int(self._fetch("SELECT COUNT(*) FROM local2_watches WHERE owner=?", (owner,))[0][0])

    def set_paused(self, watch_id: str, paused: bool, next_due: float | None) -> bool:
        """Pause (or resume with its ``next_due``); False if there is no such watch."""
        return self._all_or_nothing(
            [
                (
                    "UPDATE local2_watches SET paused=?, next_due=?, updated_at=? WHERE watch_id=?",
                    (int(paused), next_due, time.time(), watch_id),
                )
            ]
        )

    def remove(self, watch_id: str) -> bool:
        """The watch and all that is kept of it (runs, deliveries, notices); False if none."""
        return self._all_or_nothing(
            [("DELETE FROM local2_watches WHERE watch_id=?", (watch_id,))],
            then=[
                (f"DELETE FROM {table} WHERE watch_id=?", (watch_id,))
                for table in ("local2_watch_runs", *self.NOTE_TABLES)
            ],
        )

    def due(self, now: float, limit: int = 100) -> list[tuple[str, float]]:
        """Unpaused watches whose due time has come: (id, due), earliest first."""
        rows = self._fetch(
            "SELECT watch_id, next_due FROM local2_watches WHERE paused=0 AND next_due<=? "
            "ORDER BY next_due LIMIT ?",
            (now, limit),
        )
        return [(str(w), float(d)) for w, d in rows]

    def earliest_due(self) -> float | None:
        """When the next watch is due (None: no unpaused watch has a due time)."""
        found = self._fetch("SELECT MIN(next_due) FROM local2_watches WHERE paused=0", ())
        return None if not found or found[0][0] is None else float(found[0][0])

    # -- claiming due times ---------------------------------------------------------------

    def claim(
        self, watch_id: str, due: float, next_due: float | None, claimer: str, lease_s: float
    ) -> str | None:
        """Take ``due`` of the watch for ``claimer`` and move it on to ``next_due``, at once;
        the run's id, or None if another process claimed it first (or it was paused)."""
        now = time.time()
        run_id = run_id_for(watch_id, due)
        taken = self._all_or_nothing(
            [
                (
                    "UPDATE local2_watches SET next_due=?, updated_at=? "
                    "WHERE watch_id=? AND next_due=? AND paused=0",
                    (next_due, now, watch_id, due),
                ),
                (
                    f"INSERT INTO local2_watch_runs ({RUN_FIELDS}) "
                    "VALUES (?, ?, ?, ?, ?, 1, ?, ?, NULL, NULL, NULL)",
                    (watch_id, due, run_id, RUNNING, claimer, now + lease_s, now),
                ),
            ]
        )
        return run_id if taken else None

    def start_now(self, watch_id: str, due: float, claimer: str, lease_s: float) -> str | None:
        """A run of the watch at ``due`` outside its schedule (``local2 watch run``): its
        schedule is left as it is; the run's id (:func:`now_run_id`), or None if it has a run
        at ``due``."""
        now = time.time()
        run_id = now_run_id(watch_id, due)
        taken = self._all_or_nothing(
            [
                (
                    f"INSERT INTO local2_watch_runs ({RUN_FIELDS}) "
                    "VALUES (?, ?, ?, ?, ?, 1, ?, ?, NULL, NULL, NULL) "
                    "ON CONFLICT (watch_id, due) DO NOTHING",
                    (
                        watch_id,
                        due,
                        run_id,
                        RUNNING,
                        claimer,
                        now + lease_s,
                        now,
                    ),
                )
            ]
        )
        return run_id if taken else None

    def lapsed(self, now: float, limit: int = 100) -> list[WatchRunRow]:
        """Runs still marked running whose lease ran out: their process stopped."""
        return self._runs(
            "WHERE status=? AND lease_until<? ORDER BY due LIMIT ?", (RUNNING, now, limit)
        )

    def take_over(self, run: WatchRunRow, claimer: str, lease_s: float) -> bool:
        """Take a lapsed run from the process that held it; False if another did first."""
        now = time.time()
        return self._all_or_nothing(
            [
                (
                    "UPDATE local2_watch_runs SET claimed_by=?, lease_until=?, "
                    f"attempts=attempts+1 {_AS_SEEN}",
                    (claimer, now + lease_s, *_as_seen(run, now)),
                )
            ]
        )

    def give_up(self, run: WatchRunRow, reason: str) -> bool:
        """Mark a lapsed run failed (its processes kept stopping); False if another moved."""
        now = time.time()
        return self._all_or_nothing(
            [
                (
                    f"UPDATE local2_watch_runs SET status=?, finished_at=?, error=? {_AS_SEEN}",
                    (FAILED, now, reason, *_as_seen(run, now)),
                )
            ]
        )

    def renew(self, watch_id: str, due: float, claimer: str, lease_s: float) -> bool:
        """Extend a running run's lease; False if it is no longer ``claimer``'s."""
        return self._all_or_nothing(
            [
                (
                    "UPDATE local2_watch_runs SET lease_until=? "
                    "WHERE watch_id=? AND due=? AND claimed_by=? AND status=?",
                    (time.time() + lease_s, watch_id, due, claimer, RUNNING),
                )
            ]
        )

    def finish(
        self,
        watch_id: str,
        due: float,
        claimer: str,
        status: str,
        error: str | None = None,
        summary: dict[str, Any] | None = None,  # what changed, JSON (contracts.watch)
    ) -> bool:
        """Record how the run ended; False if another process had taken it over."""
        return self._all_or_nothing(
            [
                (
                    "UPDATE local2_watch_runs SET status=?, finished_at=?, error=?, summary=? "
                    "WHERE watch_id=? AND due=? AND claimed_by=? AND status=?",
                    (
                        status,
                        time.time(),
                        error,
                        None if summary is None else json.dumps(summary),
                        watch_id,
                        due,
                        claimer,
                        RUNNING,
                    ),
                )
            ]
        )

    def runs(self, watch_id: str, limit: int = 20) -> list[WatchRunRow]:
        """The watch's runs, newest due time first."""
        return self._runs("WHERE watch_id=? ORDER BY due DESC LIMIT ?", (watch_id, limit))

    def last_done(self, watch_id: str, before: float) -> WatchRunRow | None:
        """The latest finished run of the watch due before ``before``: what a run compares with."""
        rows = self._runs(
            "WHERE watch_id=? AND status=? AND due<? ORDER BY due DESC LIMIT 1",
            (watch_id, DONE, before),
        )
        return rows[0] if rows else None

    # -- reading rows ---------------------------------------------------------------------

    def _watches(self, clause: str, params: Sequence[Any]) -> list[WatchRow]:
        rows = self._fetch(f"SELECT {WATCH_FIELDS} FROM local2_watches {clause}", params)
        out: list[WatchRow] = []
        for r in rows:
            row = dict(zip(WatchRow.__annotations__, r, strict=True))
            row["options"], row["targets"] = json.loads(r[6]), json.loads(r[7])
            row["paused"] = bool(r[9])
            out.append(row)  # type: ignore[arg-type]  # built from the row's own keys
        return out

    def _runs(self, clause: str, params: Sequence[Any]) -> list[WatchRunRow]:
        rows = self._fetch(f"SELECT {RUN_FIELDS} FROM local2_watch_runs {clause}", params)
        out: list[WatchRunRow] = []
        for r in rows:
            row = dict(zip(WatchRunRow.__annotations__, r, strict=True))
            row["summary"] = None if r[10] is None else json.loads(r[10])
            out.append(row)  # type: ignore[arg-type]  # built from the row's own keys
        return out


# A lapsed run still as it was seen: running, held by the same process at the same attempt,
# its lease out. Taking it over and giving it up both change it only then (another process
# that moved it first wins).
_AS_SEEN = (
    "WHERE watch_id=? AND due=? AND status=? AND claimed_by=? AND attempts=? AND lease_until<?"
)


def _as_seen(run: WatchRunRow, now: float) -> tuple[Any, ...]:
    """The parameters of :data:`_AS_SEEN` for ``run``, seen lapsed at ``now``."""
    return (run["watch_id"], run["due"], RUNNING, run["claimed_by"], run["attempts"], now)


def run_id_for(watch_id: str, due: float) -> str:
    """The research run of a due time: the same id whichever process runs it, so a run
    taken over from a process that died resumes from its checkpoints."""
    return f"{watch_id}-{int(due)}"


def now_run_id(watch_id: str, due: float) -> str:
    """The research run of a run made now (``local2 watch run``): its due time to the
    millisecond, so two made in one second are two runs (a due time of whole seconds keeps
    :func:`run_id_for`'s id)."""
    millis = round(due * 1000)
    if millis % 1000 == 0:
        return run_id_for(watch_id, due)
    return f"{watch_id}-{millis // 1000}-{millis % 1000:03d}"


class SqliteWatchStore(SqliteSql, WatchStore):
    """The watches in ``watches.sqlite`` (or ``:memory:``), shared by the processes of one
    machine: ``BEGIN IMMEDIATE`` lets one claim in at a time."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, SQLITE_SCHEMA + self.NOTES_SQLITE_SCHEMA)

    def _all_or_nothing(self, steps: Sequence[Step], then: Sequence[Step] = ()) -> bool:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for sql, params in steps:
                    if self._conn.execute(sql, tuple(params)).rowcount != 1:
                        self._conn.rollback()
                        return False
                for sql, params in then:
                    self._conn.execute(sql, tuple(params))
            except BaseException:
                self._conn.rollback()
                raise
            self._conn.commit()
            return True
