"""Where the watches are kept: beside the rest of the person's data, as ``system.checkpointer``
chooses (``watches.sqlite`` in the data directory, the team's Postgres, or memory)."""

from __future__ import annotations

from local2.config import Settings
from local2.storage._watches import SqliteWatchStore, WatchStore


def open_watches(settings: Settings) -> WatchStore:
    """The configured watch store (closed by the caller)."""
    kind = settings.system.checkpointer
    if kind == "postgres":
        # psycopg: 186 modules at import, only for a team's Postgres store (as _open.py does).
        from local2.storage._watch_postgres import open_postgres_watches

        assert settings.system.postgres_url, "load_settings() requires the URL"
        return open_postgres_watches(
            settings.system.postgres_url, settings.system.postgres_pool_size
        )
    if kind == "memory":
        return SqliteWatchStore(":memory:")
    return SqliteWatchStore(settings.data_dir / "watches.sqlite")
