"""The one place that chooses where conversations, research runs and votes are kept.

``system.checkpointer`` chooses: ``sqlite`` (files under the data directory, the default),
``postgres`` (a server several processes share; see :mod:`local2.storage._postgres`) or
``memory`` (nothing kept). Research runs follow the same choice (``research.sqlite``, or a
schema of their own on Postgres, see :func:`local2.storage._postgres.research_saver`), so a
run started through one ``local2 serve`` process can be read and resumed through any other.
The parts of each are opened together so they share one connection pool, and closed
together.
"""

from __future__ import annotations

from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver

from local2.config import Settings
from local2.storage._bundles import ResearchStorage, SharedLocks, Storage
from local2.storage._people import People, SqlitePeople, people_beside
from local2.storage._research_runs import SQLITE_STEERS, SqliteRunIndex, SqliteSteerInbox
from local2.storage._turn_log import SqliteTurnLog, TurnLog
from local2.storage._votes import SqliteVoteLog, VoteLog


def open_storage(
    settings: Settings,
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    turn_log: TurnLog | None = None,
    locks: SharedLocks | None = None,
) -> Storage:
    """The configured store, keeping any part the caller supplied (and not closing those)."""
    kind = settings.system.checkpointer
    if checkpointer is not None and turn_log is not None:
        people = people_beside(turn_log)
        return Storage(checkpointer, turn_log, locks or SharedLocks(), [people.close], None, people)
    if kind == "postgres":
        # psycopg: 186 modules at import (about 1 s), only for a team's Postgres store
        from local2.storage._postgres import open_postgres

        assert settings.system.postgres_url, "load_settings() requires the URL"
        opened = open_postgres(settings.system.postgres_url, settings.system.postgres_pool_size)
    elif kind == "memory":
        # LangGraph's checkpointers: 350 modules at import; open_people, open_votes need none
        from langgraph.checkpoint.memory import InMemorySaver

        log = SqliteTurnLog(":memory:")
        opened = Storage(InMemorySaver(), log, SharedLocks(), [log.close])
        opened.people = people_beside(log)
    else:
        # LangGraph's checkpointers: 350 modules at import; open_people, open_votes need none
        from local2.storage._checkpointer import sqlite_checkpointer

        path = settings.system.checkpoint_path or settings.data_dir / "checkpoints.sqlite"
        saver = sqlite_checkpointer(path)
        log = SqliteTurnLog(path)
        opened = Storage(saver, log, SharedLocks(), [log.close, saver.conn.close])
        opened.people = people_beside(log)
    if checkpointer is not None or turn_log is not None or locks is not None:
        opened.checkpointer = checkpointer or opened.checkpointer
        if turn_log is not None:
            opened.turn_log = turn_log
            opened.people = people_beside(turn_log)
        opened.locks = locks or opened.locks
    return opened


def open_research_storage(
    settings: Settings, checkpointer: BaseCheckpointSaver[str] | None = None
) -> ResearchStorage:
    """The configured storage; a ``checkpointer`` the caller supplies is used (and not closed)."""
    kind = settings.system.checkpointer
    if kind == "postgres":
        # psycopg: 186 modules at import, only for a team's Postgres store
        from local2.storage._postgres import open_research_postgres

        assert settings.system.postgres_url, "load_settings() requires the URL"
        opened = open_research_postgres(
            settings.system.postgres_url, settings.system.postgres_pool_size
        )
        opened.checkpointer = checkpointer or opened.checkpointer
        return opened
    if kind == "memory":
        # LangGraph's checkpointers: 350 modules at import; open_people, open_votes need none
        from langgraph.checkpoint.memory import InMemorySaver

        index = SqliteRunIndex(":memory:")
        inbox = SqliteSteerInbox.beside(index, SQLITE_STEERS)
        saver = checkpointer or InMemorySaver()
        return ResearchStorage(saver, index, SharedLocks(), inbox, [index.close])
    path = settings.data_dir / "research.sqlite"
    index = SqliteRunIndex(path)
    inbox = SqliteSteerInbox.beside(index, SQLITE_STEERS)
    opened = ResearchStorage(checkpointer, index, SharedLocks(), inbox, [index.close])  # type: ignore[arg-type]  # a SqliteSaver or the one given
    if checkpointer is None:
        # LangGraph's checkpointers: 350 modules at import; open_people, open_votes need none
        from local2.storage._checkpointer import sqlite_checkpointer

        saver = opened.checkpointer = sqlite_checkpointer(path)
        opened.closers.append(saver.conn.close)
    return opened


def open_people(settings: Settings) -> People:
    """People alone (``local2 users``, the platform's auth), in the conversation store."""
    if settings.system.checkpointer == "postgres":
        # psycopg: 186 modules at import, only for a team's Postgres store
        from local2.storage._postgres import open_postgres_people

        assert settings.system.postgres_url, "load_settings() requires the URL"
        return open_postgres_people(settings.system.postgres_url)
    return SqlitePeople(votes_path(settings))


def votes_path(settings: Settings) -> str | Path:
    """Where votes live: the checkpoint database (in memory when checkpoints are)."""
    if settings.system.checkpointer == "memory":
        return ":memory:"
    return settings.system.checkpoint_path or settings.data_dir / "checkpoints.sqlite"


def open_votes(settings: Settings) -> VoteLog:
    """The configured vote log: on the team's Postgres with ``checkpointer: postgres``."""
    if settings.system.checkpointer == "postgres":
        # psycopg: 186 modules at import, only for a team's Postgres store
        from local2.storage._postgres import open_postgres_votes

        assert settings.system.postgres_url, "load_settings() requires the URL"
        return open_postgres_votes(settings.system.postgres_url)
    return SqliteVoteLog(votes_path(settings))
