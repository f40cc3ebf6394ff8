"""Feed tokens as the watch store keeps them, on SQLite and on a real Postgres: no token or
secret in the store (a hash and a nonce), the same address shown again until renewed, a
token checked against the hash by any process (in constant time), an older store's
plain-text secrets voided on opening with a warning naming whose, and a server with another
feed key refusing to show an address it cannot make again, with the fix."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.contracts import Person
from local2.errors import InvalidInput
from local2.service.watches._feed import KEY_ENV, WatchFeed, digest
from local2.storage import SqliteWatchStore, WatchStore
from local2.storage._watch_postgres import open_postgres_watches
from tests.conftest import make_settings

ALICE, BOB = Person("alice"), Person("bob")
OLD_SECRET = "an-older-locals-plain-secret-0123456789"


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """Opens stores on one database, and reads every value of its feed table back raw."""
    opened: list[WatchStore] = []
    if request.param == "sqlite":
        path = tmp_path / "watches.sqlite"

        def open_one() -> WatchStore:
            opened.append(SqliteWatchStore(path))
            return opened[-1]

        def raw() -> str:
            with sqlite3.connect(path) as conn:
                rows = conn.execute("SELECT * FROM local2_watch_feeds").fetchall()
            return repr(rows) + path.read_bytes().decode("latin-1")
    else:
        import psycopg

        url = request.getfixturevalue("postgres_url")

        def open_one() -> WatchStore:
            opened.append(open_postgres_watches(url))
            return opened[-1]

        def raw() -> str:
            with psycopg.connect(url) as conn:
                return repr(conn.execute("SELECT * FROM local2_watch_feeds").fetchall())

    yield open_one, raw
    for store in opened:
        store.close()  # type: ignore[attr-defined]


def test_the_store_keeps_no_feed_token_and_any_process_checks_one(
    engine: Any, tmp_path: Path
) -> None:
    open_one, raw = engine
    settings = make_settings(tmp_path)
    feed = WatchFeed(open_one(), settings)
    token = feed.token(ALICE)
    name, secret = token.split(".", 1)
    assert name == "alice" and len(secret) >= 32
    assert feed.token(ALICE) == token  # the same address until renewed
    assert feed.holder(token) == "alice"

    kept = raw()
    assert secret not in kept and token not in kept
    assert digest(secret) in kept  # what it keeps instead

    other = WatchFeed(open_one(), settings)  # another process on the same store and key
    assert other.holder(token) == "alice" and other.token(ALICE) == token
    assert other.holder(f"alice.{secret[:-1]}x") is None
    assert other.holder(f"bob.{secret}") is None  # a secret opens its own name's feed alone
    renewed = other.renew(ALICE)
    assert renewed != token and feed.holder(token) is None and feed.holder(renewed) == "alice"
    assert renewed.split(".", 1)[1] not in raw()


def test_an_older_stores_plain_secrets_are_voided_with_a_warning(
    engine: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    open_one, raw = engine
    older = open_one()
    older.feed_secret("bob", OLD_SECRET)  # as LoCAL2 before hashing kept it: the secret
    assert OLD_SECRET in raw()

    with caplog.at_level(logging.WARNING):
        feed = WatchFeed(open_one(), make_settings(tmp_path))
    assert OLD_SECRET not in raw()
    assert "bob" in caplog.text and "void" in caplog.text and OLD_SECRET not in caplog.text
    assert feed.holder(f"bob.{OLD_SECRET}") is None  # the old address opens nothing
    fresh = feed.token(BOB)  # the next one asked for is new, and works
    assert fresh != f"bob.{OLD_SECRET}" and feed.holder(fresh) == "bob"


def test_a_server_with_another_feed_key_says_how_to_show_the_address(
    engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_one, _ = engine
    monkeypatch.setenv(KEY_ENV, "the-first-servers-key")
    token = WatchFeed(open_one(), make_settings(tmp_path)).token(ALICE)
    monkeypatch.setenv(KEY_ENV, "another-servers-key")
    elsewhere = WatchFeed(open_one(), make_settings(tmp_path))
    assert elsewhere.holder(token) == "alice"  # checked by its hash: no key needed
    with pytest.raises(InvalidInput) as refused:
        elsewhere.token(ALICE)
    assert "another feed key" in refused.value.message
    assert KEY_ENV in refused.value.fix and "POST /watches/feed/link" in refused.value.fix
    assert elsewhere.holder(renewed := elsewhere.renew(ALICE)) == "alice"
    assert elsewhere.holder(token) is None and renewed != token


def test_the_feed_key_file_is_made_once_and_kept_private(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    store = SqliteWatchStore(tmp_path / "w.sqlite")
    try:
        token = WatchFeed(store, settings).token(ALICE)
        key = settings.data_dir / "feed.key"
        assert key.stat().st_mode & 0o777 == 0o600
        assert WatchFeed(store, settings).token(ALICE) == token  # read back, not made again
    finally:
        store.close()
