"""Watches on the team's Postgres: the store every ``local2 serve`` process claims due runs in.

A claim is one transaction (``conn.transaction()``): under READ COMMITTED a second process's
``UPDATE … WHERE next_due = <due>`` waits for the first one's commit, then reads the row
anew, finds ``next_due`` moved on and changes nothing, so its transaction is rolled back and
it runs nothing. No process is special; the database coordinates.

psycopg is imported here (and in :mod:`._postgres`), only with ``checkpointer: postgres``.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg.rows import dict_row

from local2.errors import StorageUnavailable
from local2.storage._postgres import PooledSql, describe, open_pool, setup_schema
from local2.storage._watches import POSTGRES_SCHEMA, Step, WatchStore


class PostgresWatchStore(PooledSql, WatchStore):
    """The watches, their runs, notices and deliveries in ``local2_watch*`` tables."""

    def _all_or_nothing(self, steps: Sequence[Step], then: Sequence[Step] = ()) -> bool:
        changed = True
        with self._pool.connection() as conn, conn.transaction():
            for sql, params in steps:
                if conn.execute(sql.replace("?", "%s"), tuple(params)).rowcount != 1:
                    changed = False
                    raise psycopg.Rollback()  # the transaction block undoes it and goes on
            for sql, params in then:
                conn.execute(sql.replace("?", "%s"), tuple(params))
        return changed


def open_postgres_watches(url: str, pool_size: int = 4) -> PostgresWatchStore:
    """The watch store over a pool of its own, its tables created once."""
    pool = open_pool(url, pool_size, row_factory=dict_row)
    store = PostgresWatchStore(pool, owns_pool=True)
    try:
        setup_schema(pool, None, POSTGRES_SCHEMA + store.NOTES_POSTGRES_SCHEMA)
    except psycopg.Error as exc:
        pool.close()
        raise StorageUnavailable(
            f"Cannot set up the watch tables in {describe(url)}: {exc}",
            "The database user needs CREATE on the database (docs/deploy.md).",
        ) from exc
    return store
