"""The people table and whose each session is, on SQLite and on Postgres."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.contracts._people import LOCAL, Person
from local2.errors import InvalidInput, UnknownTurn
from local2.service.access import Access
from local2.storage._people import People, SqlitePeople
from local2.storage._research_runs import SqliteRunIndex
from local2.storage._turn_log import SqliteTurnLog


@pytest.fixture(params=["sqlite", "postgres"])
def people(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[People]:
    if request.param == "sqlite":
        store: Any = SqlitePeople(tmp_path / "checkpoints.sqlite")
    else:
        from local2.storage._postgres import open_postgres_people

        store = open_postgres_people(request.getfixturevalue("postgres_url"))
    yield store
    store.close()


def test_a_token_names_its_person_and_only_a_hash_is_kept(people: People, tmp_path: Path) -> None:
    token = people.add("alice")
    admin_token = people.add("carol", admin=True)
    assert token.startswith("l2_") and len(token) > 40 and token != admin_token
    assert people.by_token(token) == Person("alice")
    assert people.by_token(admin_token) == Person("carol", admin=True)
    assert people.by_token(token + "x") is None and people.by_token("") is None
    listed = people.list()
    assert [p["name"] for p in listed] == ["alice", "carol"]
    assert token not in repr(listed)
    if isinstance(people, SqlitePeople):
        raw = (tmp_path / "checkpoints.sqlite").read_bytes()
        raw += b"".join(p.read_bytes() for p in tmp_path.glob("checkpoints.sqlite-*"))
        assert token.encode() not in raw and token[3:].encode() not in raw


def test_rotate_and_remove_end_the_old_token(people: People) -> None:
    first = people.add("bob")
    second = people.rotate("bob")
    assert people.by_token(first) is None and people.by_token(second) == Person("bob")
    people.remove("bob")
    assert people.by_token(second) is None and not people.configured()
    with pytest.raises(InvalidInput, match="No person 'bob'"):
        people.rotate("bob")


@pytest.mark.parametrize("name", ["", "Alice", "local", "-x", "a b", "x" * 200])
def test_names_that_cannot_be_a_person(people: People, name: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        people.add(name)
    assert raised.value.fix  # says what to do
    people.add("alice")
    with pytest.raises(InvalidInput, match="already"):
        people.add("alice")


def test_a_session_is_its_first_claimer_s_and_local_keeps_its_own(people: People) -> None:
    assert people.claim("s1", "alice") == "alice"
    assert people.claim("s1", "bob") == "alice"
    assert people.owner_of("s1") == "alice" and people.owner_of("never") == "local"
    assert people.owners_of(["s1", "never", "s1"]) == {"s1": "alice", "never": "local"}
    access = Access(people)
    access.claim_session(Person("alice"), "s1")
    with pytest.raises(UnknownTurn, match="No session 's1'"):
        access.claim_session(Person("bob"), "s1")
    with pytest.raises(UnknownTurn):
        access.read_session(LOCAL, "s1")
    access.read_session(Person("carol", admin=True), "s1")
    with pytest.raises(UnknownTurn):
        access.write_session(Person("carol", admin=True), "s1")
    assert [(r["admin"], r["item"], r["owner"]) for r in people.admin_reads()] == [
        ("carol", "s1", "alice")
    ]


def test_a_session_local_already_has_turns_in_stays_local_s(tmp_path: Path) -> None:
    log = SqliteTurnLog(tmp_path / "c.sqlite")
    log.append(parent_id=None, session_id="old", query_id="q", user="u", assistant="a")
    people = SqlitePeople.beside(log, SqlitePeople.SCHEMA)
    assert people.claim("old", "alice") == "local"
    people.claim("new", "alice")
    log.append(parent_id=None, session_id="new", query_id="q", user="u2", assistant="a2")
    assert [s["session_id"] for s in log.sessions(10, "alice")] == ["new"]
    assert [s["session_id"] for s in log.sessions(10, "local")] == ["old"]
    assert {s["session_id"] for s in log.sessions(10)} == {"old", "new"}


def test_a_research_list_from_before_owners_gets_the_column(tmp_path: Path) -> None:
    path = tmp_path / "research.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE research_runs (run_id TEXT PRIMARY KEY, question TEXT NOT NULL, "
            "model TEXT NOT NULL DEFAULT '', status TEXT NOT NULL, created_at REAL NOT NULL, "
            "updated_at REAL NOT NULL)"
        )
        conn.execute("INSERT INTO research_runs VALUES ('r0', 'q', 'm', 'done', 1, 1)")
    index = SqliteRunIndex(path)
    index.start("r1", "q1", "m", "alice")
    assert index.get("r0")["owner"] == "local"  # type: ignore[index]
    assert [r["run_id"] for r in index.recent(10, "alice")] == ["r1"]
    assert [r["run_id"] for r in index.recent(10, "local")] == ["r0"]
    SqliteRunIndex(path).close()  # opening it again keeps the column
    index.close()


def test_a_trusted_proxy_names_people_but_never_local_or_the_team(tmp_path: Path) -> None:
    from local2.service import Identify, networks

    people = SqlitePeople(tmp_path / "c.sqlite")
    people.add("carol", admin=True)
    identify = Identify(Access(people), None, "X-Forwarded-User", networks(["127.0.0.1"]))
    assert identify.person("", "Carol", "127.0.0.1") == Person("carol", admin=True)
    assert identify.person("", "dana@example.org", "127.0.0.1") == Person("dana@example.org")
    for reserved in ("local", "team", "", "a b"):
        assert identify.person("", reserved, "127.0.0.1") is None, reserved
    assert identify.person("", "carol", "10.0.0.9") is None  # not a trusted address
    people.close()
