"""A full disk, recognised whichever store ran out of room, and said as one error.

SQLite says ``database or disk is full`` (``SQLITE_FULL``), Postgres sends SQLSTATE 53100
(``disk_full``), a plain file write fails with ``ENOSPC`` (or ``EDQUOT`` on a quota), and
Chroma passes its own SQLite's message on. Each becomes one
:class:`~local2.errors.StorageFull` naming where the data lives and what to do, so the
person reads a fix, not a stack. A turn that fails this way records nothing: the turns
answered before it are all kept, and the session goes on once there is room.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path

from local2.config import Settings
from local2.errors import StorageFull

POSTGRES_DISK_FULL = "53100"
_MESSAGES = ("database or disk is full", "no space left on device", "disk quota exceeded")
NO_ROOM_BYTES = 256 * 1024  # less than this left is a full disk for SQLite's journal


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def postgres_full(exc: BaseException) -> bool:
    """Whether ``exc`` is the Postgres server saying its disk is full."""
    return any(getattr(e, "sqlstate", None) == POSTGRES_DISK_FULL for e in _chain(exc))


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says a disk is full."""
    return postgres_full(exc) or any(
        isinstance(e, StorageFull)
        or (isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT))
        or any(m in str(e).lower() for m in _MESSAGES)
        for e in _chain(exc)
    )


def no_room(directory: Path) -> bool:
    """Whether the disk holding ``directory`` (or its nearest existing parent) is full."""
    for place in (directory, *directory.parents):
        if place.exists():
            try:
                return shutil.disk_usage(place).free < NO_ROOM_BYTES
            except OSError:
                return False
    return False


def storage_full(settings: Settings, *, postgres: bool = False) -> StorageFull:
    """The error a person reads when the store the turn writes to has no room left:
    the data directory's disk, or with ``postgres`` the database server's."""
    if postgres:
        return StorageFull(
            "The Postgres server's disk is full (SQLSTATE 53100): this turn could not be "
            f"saved. Nothing answered before it is lost. (Memory and files: {settings.data_dir}.)",
            "Free space on the database server's disk (its data directory), then ask again.",
        )
    return StorageFull(
        f"The disk holding LoCAL2's data directory ({settings.data_dir}) is full: this turn "
        "could not be saved. Nothing answered before it is lost.",
        f"Free space on that disk (`df -h {settings.data_dir}` shows how much is left), "
        "then ask again.",
    )


def raise_if_full(exc: BaseException, settings: Settings) -> None:
    """Raise :func:`storage_full` from ``exc`` if that is what ``exc`` means. SQLite
    opening a database on a full disk says only ``disk I/O error`` (it cannot create its
    journal): a store error with no room left under the data directory is taken as full."""
    if isinstance(exc, StorageFull):
        return
    if postgres_full(exc):
        raise storage_full(settings, postgres=True) from exc
    unclear = isinstance(exc, sqlite3.Error | OSError)
    if is_disk_full(exc) or (unclear and no_room(settings.data_dir)):
        raise storage_full(settings) from exc
