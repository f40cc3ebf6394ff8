"""Where research runs live: their checkpoints, the list of runs and the lock on each run.

They follow ``system.checkpointer`` as conversations do: ``sqlite`` keeps them in
``<data_dir>/research.sqlite``, ``memory`` keeps nothing, and ``postgres`` puts them on the
team's server (in a schema of their own, see :func:`local2.storage.postgres.research_saver`), so a
run started through one ``local2 serve`` process can be listed, read and resumed through
any other, and two processes never run the same run at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from langgraph.checkpoint.base import BaseCheckpointSaver

from local2.config import Settings
from local2.storage.conversations import ClosedTogether, SharedLocks
from local2.storage.research_runs import RunIndex, SqliteRunIndex


@dataclass
class ResearchStorage(ClosedTogether):
    checkpointer: BaseCheckpointSaver
    index: RunIndex
    locks: SharedLocks
    closers: list[Callable[[], None]] = field(default_factory=list)


def open_research_storage(
    settings: Settings, checkpointer: BaseCheckpointSaver | None = None
) -> ResearchStorage:
    """The configured storage; a ``checkpointer`` the caller supplies is used (and not closed)."""
    kind = settings.system.checkpointer
    if kind == "postgres":
        from local2.storage.postgres import open_research_postgres

        assert settings.system.postgres_url, "load_settings() requires the URL"
        opened = open_research_postgres(
            settings.system.postgres_url, settings.system.postgres_pool_size
        )
        opened.checkpointer = checkpointer or opened.checkpointer
        return opened
    if kind == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        index = SqliteRunIndex(":memory:")
        return ResearchStorage(checkpointer or InMemorySaver(), index, SharedLocks(), [index.close])
    path = settings.data_dir / "research.sqlite"
    index = SqliteRunIndex(path)
    opened = ResearchStorage(checkpointer, index, SharedLocks(), [index.close])  # type: ignore[arg-type]
    if checkpointer is None:
        from local2.storage.checkpointer import sqlite_checkpointer

        saver = opened.checkpointer = sqlite_checkpointer(path)
        opened.closers.append(saver.conn.close)
    return opened
