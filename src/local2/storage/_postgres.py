"""Conversations on Postgres: the checkpointer, the turn log and the per-session lock.

Several ``local2 serve`` processes share one database. LangGraph's checkpointer does not stop
two of them from running a turn of the same thread at once (each would read the same last
checkpoint and one answer would vanish from the history), so every turn holds a Postgres
advisory lock on its session for its whole run. The lock lives in the database session of
one connection: if the process dies, Postgres drops the connection and the lock with it.
A process about to start a turn says so to the others (``NOTIFY``), so that the last turn's
critic, wherever it grades, gives way to the person's question
(:mod:`local2.service.chat._running`).

psycopg is imported here only, and this module only when ``checkpointer: postgres``.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row, tuple_row
from psycopg_pool import ConnectionPool, PoolTimeout

from local2.errors import StorageUnavailable
from local2.storage._bundles import ResearchStorage, SharedLocks, Storage
from local2.storage._checkpointer import CompressedSerializer
from local2.storage._people import POSTGRES_SCHEMA as PEOPLE_SCHEMA
from local2.storage._people import People
from local2.storage._research_runs import OWNER_COLUMN_POSTGRES as RUNS_OWNER_PG
from local2.storage._research_runs import POSTGRES_SCHEMA as RUNS_SCHEMA
from local2.storage._research_runs import POSTGRES_STEERS as STEERS_SCHEMA
from local2.storage._research_runs import RunIndex, SteerInbox
from local2.storage._turn_log import POSTGRES_SCHEMA as TURNS_SCHEMA
from local2.storage._turn_log import SqlTurnLog
from local2.storage._votes import POSTGRES_SCHEMA as VOTES_SCHEMA
from local2.storage._votes import SqlVoteLog

LOCK_SQL = "SELECT pg_advisory_lock(hashtextextended(%s, 0))"
TRY_LOCK_SQL = "SELECT pg_try_advisory_lock(hashtextextended(%s, 0)) AS locked"
UNLOCK_SQL = "SELECT pg_advisory_unlock(hashtextextended(%s, 0))"
ANNOUNCE_CHANNEL = "local2_turn_start"  # NOTIFY payload: "<process> <kind> <session id>"
LISTEN_POLL_S = 0.5  # how often the listener looks up from waiting (to see it should stop)
SETUP_KEY = "local2:setup"  # processes starting together create the tables one at a time
MAX_WAITING_TURNS = 64  # lock connections per process (turns running or waiting at once)
RESEARCH_SCHEMA = "local2_research"  # research runs' checkpoints and run list

log = logging.getLogger(__name__)


def describe(url: str) -> str:
    """Where the database is, for messages: host, port and name, never the password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the configured database"
    host = parts.get("host") or "localhost"
    return f"{host}:{parts.get('port') or 5432}/{parts.get('dbname') or ''}"


def open_pool(url: str, max_size: int, **kwargs: Any) -> ConnectionPool:
    """An open pool of autocommit connections, or :class:`StorageUnavailable` saying why."""
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=max(2, max_size),
        kwargs={"autocommit": True, "prepare_threshold": 0, **kwargs},
        open=False,
        name="local2",
    )
    try:
        pool.open(wait=True, timeout=10)
    except PoolTimeout as exc:
        pool.close()
        try:  # one direct attempt, for the server's own reason
            psycopg.connect(url, connect_timeout=5).close()
            reason = str(exc)
        except psycopg.Error as direct:
            reason = str(direct).strip().splitlines()[-1]
        raise StorageUnavailable(
            f"Cannot reach Postgres at {describe(url)}: {reason}",
            "Start the server (docs/deploy.md) and check LOCAL2_POSTGRES_URL.",
        ) from None
    return pool


class PooledSql:
    """Runs the shared SQLite-style statements (``?`` parameters) through a connection pool
    (closed with this object only when it ``owns_pool``; else with the storage it is part of)."""

    def __init__(self, pool: ConnectionPool, owns_pool: bool = False) -> None:
        self._pool = pool
        self._owns_pool = owns_pool

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        with self._pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            cur.execute(sql.replace("?", "%s"), tuple(params))
            return list(cur.fetchall())

    def _write(self, sql: str, params: Sequence[Any]) -> None:
        with self._pool.connection() as conn:
            conn.execute(sql.replace("?", "%s"), tuple(params))

    def close(self) -> None:
        if self._owns_pool:
            self._pool.close()


class PostgresTurnLog(PooledSql, SqlTurnLog):
    """The turn log in a ``local2_turns`` table, through a connection pool."""

    NOTE_ORDER = "created_at, seq"


class PostgresRunIndex(PooledSql, RunIndex):
    """The research runs table, in the research schema (the pool's search path)."""


class PostgresSteerInbox(PooledSql, SteerInbox):
    """Research runs' inboxes, in the research schema beside the run list."""


class PostgresPeople(PooledSql, People):
    """People, their tokens and whose each session is, beside the turn log."""


class PostgresVoteLog(PooledSql, SqlVoteLog):
    """The arena's votes in a ``local2_votes`` table, beside the turn log."""

    ORDER = "created_at, seq"


class AdvisoryLocks(SharedLocks):
    """One turn per session (or one run of a research run, ``kind="research"``) across every
    process: Postgres advisory locks, each held on a connection of its own while it runs."""

    remote = True

    def __init__(self, url: str, kind: str = "session") -> None:
        self._kind = kind
        self._url = url
        self._origin = uuid.uuid4().hex[:12]  # this process's announcements, told apart
        self._heard: list[Callable[[str], None]] = []
        self._listener: threading.Thread | None = None
        self._closing = threading.Event()
        self._pool = ConnectionPool(
            url,
            min_size=0,
            max_size=MAX_WAITING_TURNS,
            kwargs={"autocommit": True},
            name="local2-locks",
            open=True,
        )
        self._held: dict[str, psycopg.Connection[Any]] = {}
        self._guard = threading.Lock()

    def acquire(self, session_id: str, blocking: bool = True) -> bool:
        key = self._key(session_id)
        conn = self._pool.getconn()
        try:
            if blocking:
                conn.execute(LOCK_SQL, (key,))
            elif not conn.execute(TRY_LOCK_SQL, (key,)).fetchone()[0]:  # type: ignore[index]  # the lock query always returns one row
                self._pool.putconn(conn)
                return False
        except BaseException:
            conn.close()  # a wait cut short must not leave the lock to a pooled connection
            self._pool.putconn(conn)
            raise
        with self._guard:
            self._held[session_id] = conn
        return True

    def _key(self, name: str) -> str:
        return f"local2:{self._kind}:{name}"

    def held_elsewhere(self, session_id: str) -> bool:
        with self._guard:
            if session_id in self._held:
                return False
        with self._pool.connection() as conn:
            key = self._key(session_id)
            if not conn.execute(TRY_LOCK_SQL, (key,)).fetchone()[0]:  # type: ignore[index]  # the lock query always returns one row
                return True
            conn.execute(UNLOCK_SQL, (key,))
        return False

    def release(self, session_id: str) -> None:
        with self._guard:
            conn = self._held.pop(session_id, None)
        if conn is None:
            return
        try:
            conn.execute(UNLOCK_SQL, (self._key(session_id),))
        except psycopg.Error:
            conn.close()  # a broken connection: the server has already let go
        self._pool.putconn(conn)

    def announce(self, session_id: str) -> None:
        with self._pool.connection() as conn:
            payload = f"{self._origin} {self._kind} {session_id}"
            conn.execute("SELECT pg_notify(%s, %s)", (ANNOUNCE_CHANNEL, payload))

    def listen(self, heard: Callable[[str], None]) -> None:
        self._heard.append(heard)
        if self._listener is None:
            self._listener = threading.Thread(
                target=self._listen, name="local2-announcements", daemon=True
            )
            self._listener.start()

    def _listen(self) -> None:
        """Hand other processes' announcements to the listeners, on a connection of its own
        (reconnecting after a lost one) until closed."""
        while not self._closing.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {ANNOUNCE_CHANNEL}")
                    while not self._closing.is_set():
                        for note in conn.notifies(timeout=LISTEN_POLL_S):
                            self._hear(note.payload)
            except psycopg.Error as exc:
                log.warning("turn announcements lost for now: %s", exc)
                self._closing.wait(1.0)

    def _hear(self, payload: str) -> None:
        origin, kind, session_id = [*payload.split(" ", 2), "", ""][:3]
        if origin == self._origin or kind != self._kind or not session_id:
            return
        for heard in self._heard:
            try:
                heard(session_id)
            except Exception:  # a listener's failure must not end the listening
                log.exception("a turn announcement's listener failed")

    def close(self) -> None:
        self._closing.set()
        if self._listener is not None:
            self._listener.join(LISTEN_POLL_S * 4)
        self._pool.close()


def setup_schema(
    pool: ConnectionPool, saver: PostgresSaver | None, statements: str, wait_s: float = 300
) -> None:
    """Create LoCAL2's tables (and LangGraph's, given its ``saver``), once, even when
    processes start together.

    The lock is polled, not waited for: LangGraph's migrations build indexes
    CONCURRENTLY, which waits for every running statement — a blocked
    ``pg_advisory_lock`` of a second process included, a deadlock Postgres cannot see.
    """
    with pool.connection() as conn:
        deadline = time.monotonic() + wait_s
        while not conn.execute(TRY_LOCK_SQL, (SETUP_KEY,)).fetchone()["locked"]:  # type: ignore[call-overload,index]  # dict rows: the pool's row factory
            if time.monotonic() > deadline:
                raise psycopg.OperationalError("another process kept the setup lock")
            time.sleep(0.1)
        try:
            for statement in filter(str.strip, statements.split(";")):
                conn.execute(statement)
            if saver is not None:
                saver.setup()
        finally:
            conn.execute(UNLOCK_SQL, (SETUP_KEY,))


def _open_saver(
    url: str, pool_size: int, statements: str, **kwargs: Any
) -> tuple[ConnectionPool, PostgresSaver]:
    """A pool and a checkpointer over it, with LangGraph's tables and ``statements`` set up."""
    pool = open_pool(url, pool_size, row_factory=dict_row, **kwargs)
    saver = PostgresSaver(pool, serde=CompressedSerializer())  # type: ignore[arg-type]  # dict rows, which PostgresSaver reads too
    _set_up(url, pool, saver, statements)
    return pool, saver


def _set_up(url: str, pool: ConnectionPool, saver: PostgresSaver | None, statements: str) -> None:
    """:func:`setup_schema`, or the pool closed and one clear error saying what is needed."""
    try:
        setup_schema(pool, saver, statements)
    except psycopg.Error as exc:
        pool.close()
        raise StorageUnavailable(
            f"Cannot set up LoCAL2's tables in {describe(url)}: {exc}",
            "The database user needs CREATE on the database (docs/deploy.md).",
        ) from exc


def open_postgres(url: str, pool_size: int) -> Storage:
    """Checkpointer, turn log, arena votes and session locks over one database at ``url``."""
    pool, saver = _open_saver(url, pool_size, TURNS_SCHEMA + VOTES_SCHEMA + PEOPLE_SCHEMA)
    locks = AdvisoryLocks(url)
    return Storage(
        checkpointer=saver,
        turn_log=PostgresTurnLog(pool),
        locks=locks,
        closers=[locks.close, pool.close],
        votes=PostgresVoteLog(pool),
        people=PostgresPeople(pool),
    )


def open_postgres_people(url: str) -> PostgresPeople:
    """People alone (``local2 users``, the platform's auth), over a small pool of their own."""
    pool = open_pool(url, 2, row_factory=dict_row)
    _set_up(url, pool, None, TURNS_SCHEMA + PEOPLE_SCHEMA)
    return PostgresPeople(pool, owns_pool=True)


def open_postgres_votes(url: str) -> PostgresVoteLog:
    """The arena's votes alone (``local2 arena``), over a small pool of their own."""
    pool = open_pool(url, 2, row_factory=dict_row)
    _set_up(url, pool, None, VOTES_SCHEMA)
    return PostgresVoteLog(pool, owns_pool=True)


def research_saver(url: str, pool_size: int) -> tuple[ConnectionPool, PostgresSaver]:
    """Research runs' checkpoints, in LangGraph's tables of their own schema: run ids and
    session ids are both thread ids, and one must never read the other's state."""
    return _open_saver(
        url,
        pool_size,
        f"CREATE SCHEMA IF NOT EXISTS {RESEARCH_SCHEMA};{RUNS_SCHEMA};{RUNS_OWNER_PG};"
        f"{STEERS_SCHEMA}",
        options=f"-c search_path={RESEARCH_SCHEMA}",
    )


def open_research_postgres(url: str, pool_size: int) -> ResearchStorage:
    """Checkpointer, run list and run locks of research mode over the database at ``url``."""
    pool, saver = research_saver(url, pool_size)
    locks = AdvisoryLocks(url, kind="research")
    return ResearchStorage(
        checkpointer=saver,
        index=PostgresRunIndex(pool),
        locks=locks,
        inbox=PostgresSteerInbox(pool),
        closers=[locks.close, pool.close],
    )
