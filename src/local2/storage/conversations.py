"""Where conversations live: the checkpointer, the turn log and the session lock processes share.

``system.checkpointer`` chooses: ``sqlite`` (one file under the data directory, the
default), ``postgres`` (a server several processes share; see :mod:`local2.storage.postgres`) or
``memory`` (nothing kept). The three parts are opened together so they share one
connection pool, and closed together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from langgraph.checkpoint.base import BaseCheckpointSaver

from local2.config import Settings
from local2.storage.turn_log import SqliteTurnLog, TurnLog

if TYPE_CHECKING:
    from local2.storage.votes import VoteLog


class SharedLocks:
    """Session locks other processes see. A store only this process uses needs none (one
    turn per session within the process is :class:`local2.service.running.Turns`'s job)."""

    remote = False  # taking a lock is a round trip to a server (never on an event loop)

    def acquire(self, session_id: str, blocking: bool = True) -> bool:
        """Take the session's lock (False if ``blocking`` is off and another holds it)."""
        return True

    def release(self, session_id: str) -> None:
        """Let the next turn of the session go ahead (may be called from another thread)."""

    def held_elsewhere(self, session_id: str) -> bool:
        """Whether another process holds the lock now (none can, without a shared store)."""
        return False

    def close(self) -> None:
        """Nothing to release."""


class ClosedTogether:
    """Parts opened together (over one pool) and closed together, by ``closers`` in order."""

    closers: list[Callable[[], None]]

    def close(self) -> None:
        for close in self.closers:
            close()
        self.closers.clear()


@dataclass
class Storage(ClosedTogether):
    checkpointer: BaseCheckpointSaver
    turn_log: TurnLog
    locks: SharedLocks
    closers: list[Callable[[], None]] = field(default_factory=list)
    # The arena's votes, when the store keeps them too (Postgres); else opened on first use
    # (``local2.service.compare.votes_of``).
    votes: VoteLog | None = None


def open_storage(
    settings: Settings,
    *,
    checkpointer: BaseCheckpointSaver | None = None,
    turn_log: TurnLog | None = None,
    locks: SharedLocks | None = None,
) -> Storage:
    """The configured store, keeping any part the caller supplied (and not closing those)."""
    kind = settings.system.checkpointer
    if checkpointer is not None and turn_log is not None:
        return Storage(checkpointer, turn_log, locks or SharedLocks())
    if kind == "postgres":
        from local2.storage.postgres import open_postgres

        assert settings.system.postgres_url, "load_settings() requires the URL"
        opened = open_postgres(settings.system.postgres_url, settings.system.postgres_pool_size)
    elif kind == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        log = SqliteTurnLog(":memory:")
        opened = Storage(InMemorySaver(), log, SharedLocks(), [log.close])
    else:
        from local2.storage.checkpointer import sqlite_checkpointer

        path = settings.system.checkpoint_path or settings.data_dir / "checkpoints.sqlite"
        saver = sqlite_checkpointer(path)
        log = SqliteTurnLog(path)
        opened = Storage(saver, log, SharedLocks(), [log.close, saver.conn.close])
    if checkpointer is not None or turn_log is not None or locks is not None:
        opened.checkpointer = checkpointer or opened.checkpointer
        opened.turn_log = turn_log or opened.turn_log
        opened.locks = locks or opened.locks
    return opened
