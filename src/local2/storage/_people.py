"""People and what they own, beside the conversations (SQLite file or Postgres).

``local2_people`` holds each person's name, whether they are an admin, and a SHA-256 of
their token. Tokens are 32 random bytes, so a fast hash is enough: no dictionary attack
applies to them, and a slow one (bcrypt, argon2) would cost every request its time. The
token itself is printed once, by ``local2 users add`` or ``rotate``, and never stored.

``local2_session_owners`` (created with the turn log, :mod:`local2.storage._turn_log`) says
whose each session is, claimed by its first turn. A session
with no row is :data:`~local2.contracts._people.LOCAL_NAME`'s (sessions from before people
were configured, and every session of a one-person install, which writes no rows).
``local2_admin_reads`` records every read an admin made of someone else's things.
"""

from __future__ import annotations

import builtins
import hashlib
import re
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypedDict

from local2.contracts import LOCAL_NAME, TEAM_NAME, Person
from local2.errors import InvalidInput
from local2.storage._sqlite import SqliteSql
from local2.storage._turn_log import SQLITE_SCHEMA as TURNS_SCHEMA

SCHEMA = """
CREATE TABLE IF NOT EXISTS local2_people (
    name TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    admin INTEGER NOT NULL DEFAULT 0,
    created_at {time} NOT NULL,
    rotated_at {time} NOT NULL
);
CREATE TABLE IF NOT EXISTS local2_admin_reads (
    {seq}admin TEXT NOT NULL,
    kind TEXT NOT NULL,
    item TEXT NOT NULL,
    owner TEXT NOT NULL,
    created_at {time} NOT NULL
);
"""
SQLITE_SCHEMA = SCHEMA.format(time="REAL", seq="")
POSTGRES_SCHEMA = SCHEMA.format(time="DOUBLE PRECISION", seq="seq BIGSERIAL PRIMARY KEY,\n    ")

NAME_RULE = re.compile(r"^[a-z0-9][a-z0-9_.@+-]{0,127}$")  # a proxy may name people by e-mail
TOKEN_PREFIX = "l2_"  # recognisable in a leaked config or a secret scanner


def check_name(name: str) -> str:
    """A person's name as stored: lower-case letters, digits, ``_.@+-``, at most 128; not
    ``local`` nor ``team`` (reserved)."""
    if not NAME_RULE.match(name or ""):
        raise InvalidInput(
            f"'{name}' cannot be a person's name: use lower-case letters, digits and "
            "'_.@+-', starting with a letter or digit (at most 128).",
            "e.g. local2 users add alice",
        )
    if name == LOCAL_NAME:
        raise InvalidInput(
            f"'{LOCAL_NAME}' is the name of this machine's own person (no token needed).",
            "Pick another name, e.g. local2 users add alice",
        )
    if name == TEAM_NAME:
        raise InvalidInput(
            f"'{TEAM_NAME}' is reserved for the team's shared facts (recalled for everyone), "
            "not a person's name.",
            "Pick another name, e.g. local2 users add alice (team facts are written with: "
            "local2 memory save --team TEXT)",
        )
    return name


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class PersonRow(TypedDict):
    """A person as ``local2 users list`` shows them (never their token's hash)."""

    name: str
    admin: bool
    created_at: float
    rotated_at: float


class AdminRead(TypedDict):
    """An admin's read of someone else's thing, written down."""

    admin: str
    kind: str
    item: str
    owner: str
    created_at: float


class People(ABC):
    """People, their tokens, and whose each session is; subclasses run the statements."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _fetch(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]: ...

    @abstractmethod
    def _write(self, sql: str, params: Sequence[Any]) -> None: ...

    # -- people ------------------------------------------------------------------------------

    def add(self, name: str, *, admin: bool = False) -> str:
        """Add a person; returns their token (shown once, never stored)."""
        check_name(name)
        if self.get(name) is not None:
            raise InvalidInput(
                f"'{name}' is already a person here.",
                f"To give them a new token: local2 users rotate {name}",
            )
        token, now = new_token(), time.time()
        self._write(
            "INSERT INTO local2_people (name, token_hash, admin, created_at, rotated_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (name, token_hash(token), int(admin), now, now),
        )
        return token

    def rotate(self, name: str) -> str:
        """A new token for ``name``; the old one stops working at once."""
        self._known(name)
        token = new_token()
        self._write(
            "UPDATE local2_people SET token_hash = ?, rotated_at = ? WHERE name = ?",
            (token_hash(token), time.time(), name),
        )
        return token

    def remove(self, name: str) -> None:
        """Remove a person: their token stops working. What they own stays theirs (an
        admin can still read it); adding the name again gives it back to them."""
        self._known(name)
        self._write("DELETE FROM local2_people WHERE name = ?", (name,))

    def get(self, name: str) -> Person | None:
        rows = self._fetch("SELECT name, admin FROM local2_people WHERE name = ?", (name,))
        return Person(rows[0][0], bool(rows[0][1])) if rows else None

    def _known(self, name: str) -> Person:
        person = self.get(name)
        if person is None:
            raise InvalidInput(f"No person '{name}' here.", "See them with: local2 users list")
        return person

    def list(self) -> list[PersonRow]:
        """Everyone, by name: ``name, admin, created_at, rotated_at`` (never the hash)."""
        rows = self._fetch(
            "SELECT name, admin, created_at, rotated_at FROM local2_people ORDER BY name", ()
        )
        return [
            {"name": name, "admin": bool(admin), "created_at": created, "rotated_at": rotated}
            for name, admin, created, rotated in rows
        ]

    def standing(self, name: str | None) -> tuple[bool, str | None]:
        """Whether anyone is configured, and the hash of ``name``'s current token (None: no
        such person), in one statement: the app asks it on every request, to sign out a
        browser whose sign-in was made with a token that is no longer that person's."""
        rows = self._fetch(
            "SELECT EXISTS (SELECT 1 FROM local2_people), "
            "(SELECT token_hash FROM local2_people WHERE name = ?)",
            (name or "",),
        )
        return bool(rows[0][0]), rows[0][1]

    def configured(self) -> bool:
        """Whether anyone has been added: the server then asks every request who it is."""
        return bool(self._fetch("SELECT 1 FROM local2_people LIMIT 1", ()))

    def by_token(self, token: str) -> Person | None:
        """The person whose token this is, or None."""
        rows = self._fetch(
            "SELECT name, admin FROM local2_people WHERE token_hash = ?", (token_hash(token),)
        )
        return Person(rows[0][0], bool(rows[0][1])) if rows else None

    # -- whose each session is ---------------------------------------------------------------

    def claim(self, session_id: str, owner: str) -> str:
        """Make ``owner`` the owner of a session nobody owns yet; returns its owner (someone
        else's name if it was theirs already). Local's sessions need no row."""
        current = self.owner_of(session_id)
        if current != LOCAL_NAME or owner == LOCAL_NAME:
            return current
        # Unless local already has turns in it (a row-less session of theirs).
        self._write(
            "INSERT INTO local2_session_owners (session_id, owner, created_at) SELECT ?, ?, ? "
            "WHERE NOT EXISTS (SELECT 1 FROM local2_turns WHERE session_id = ?) "
            "ON CONFLICT (session_id) DO NOTHING",
            (session_id, owner, time.time(), session_id),
        )
        return self.owner_of(session_id)

    def owner_of(self, session_id: str) -> str:
        rows = self._fetch(
            "SELECT owner FROM local2_session_owners WHERE session_id = ?", (session_id,)
        )
        return rows[0][0] if rows else LOCAL_NAME

    def owners_of(self, session_ids: Iterable[str]) -> dict[str, str]:
        """``{session_id: owner}`` for each of ``session_ids`` (local's included)."""
        ids = list(dict.fromkeys(session_ids))
        found: dict[str, str] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            found.update(
                self._fetch(  # type: ignore[arg-type]  # rows of two columns
                    "SELECT session_id, owner FROM local2_session_owners WHERE session_id IN "
                    f"({', '.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return {sid: found.get(sid, LOCAL_NAME) for sid in ids}

    # -- admins' reads -----------------------------------------------------------------------

    def admin_read(self, admin: str, kind: str, item: str, owner: str) -> None:
        """Write down that ``admin`` read ``owner``'s ``kind`` ``item``."""
        self._write(
            "INSERT INTO local2_admin_reads (admin, kind, item, owner, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (admin, kind, item, owner, time.time()),
        )

    def admin_reads(self, limit: int = 100) -> builtins.list[AdminRead]:
        """The latest reads admins made of other people's things, newest first."""
        rows = self._fetch(
            "SELECT admin, kind, item, owner, created_at FROM local2_admin_reads "
            "ORDER BY created_at DESC LIMIT ?",
            (limit,),
        )
        return [
            {"admin": admin, "kind": kind, "item": item, "owner": owner, "created_at": created}
            for admin, kind, item, owner, created in rows
        ]


class SqlitePeople(SqliteSql, People):
    """People in the conversation database (``checkpoints.sqlite``); :meth:`beside` a
    turn log, on its connection."""

    SCHEMA = TURNS_SCHEMA + SQLITE_SCHEMA

    def __init__(self, path: str | Path = ":memory:") -> None:
        super().__init__(path, self.SCHEMA)


def people_beside(turn_log: object) -> SqlitePeople:
    """People in the same SQLite database as ``turn_log`` (a new in-memory one when the turn
    log is not SQLite): whose each session is must be where the sessions are listed."""
    if isinstance(turn_log, SqliteSql):
        return SqlitePeople.beside(turn_log, SqlitePeople.SCHEMA)
    return SqlitePeople(":memory:")
