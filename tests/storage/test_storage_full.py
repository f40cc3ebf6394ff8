"""Recognising a full disk from each store's own exception (``storage/_full.py``)."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import psycopg
import pytest

from local2.errors import StorageFull
from local2.storage._full import is_disk_full, raise_if_full
from tests.kit.helpers import make_settings


def test_each_store_saying_full_becomes_storage_full(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    for said in (
        sqlite3.OperationalError("database or disk is full"),
        OSError(errno.ENOSPC, "No space left on device", "/data/x"),
        RuntimeError("Error executing plan: database or disk is full"),  # Chroma's
    ):
        assert is_disk_full(said)
        with pytest.raises(StorageFull) as raised:
            raise_if_full(said, settings)
        assert str(settings.data_dir) in raised.value.message
        assert raised.value.fix.startswith("Free space on that disk")
        assert raised.value.__cause__ is said


def test_postgres_disk_full_names_the_database_server(tmp_path: Path) -> None:
    try:
        raise psycopg.errors.DiskFull("could not extend file: No space left on device")
    except psycopg.Error as failure:
        with pytest.raises(StorageFull) as raised:
            raise_if_full(failure, make_settings(tmp_path))
    assert "Postgres server's disk is full (SQLSTATE 53100)" in raised.value.message
    assert "database server's disk" in raised.value.fix


def test_other_failures_pass_through(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    for other in (sqlite3.OperationalError("no such table: x"), ValueError("bad")):
        assert not is_disk_full(other)
        raise_if_full(other, settings)  # returns: the caller re-raises it as it was
