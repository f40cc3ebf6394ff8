"""Whose each thing is, checked on every read and write a person asks for.

Every surface asks here before it touches a session, a research run or a vote on a
person's behalf (:class:`~local2.contracts._people.Person`): the HTTP API per request, the app
per signed-in person, the CLI as local (or ``--as``). Someone else's id answers exactly as
an unknown one would (:class:`~local2.errors.NotFound` with the same message), so a person
cannot tell that it exists. An admin may read everyone's, and each such read is written
down (``local2_admin_reads``); writes are only ever the owner's.

With nobody configured everything is local's and nothing is written: the checks cost one
indexed lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from local2.config import Settings
from local2.contracts import LOCAL_NAME, Person
from local2.errors import NotFound, UnknownRun, UnknownTurn
from local2.storage import People

T = TypeVar("T")


def no_session(session_id: str) -> NotFound:
    return UnknownTurn(f"No session '{session_id}'")


def no_run(run_id: str) -> NotFound:
    return UnknownRun(f"No research run '{run_id}'.")


@dataclass(eq=False)
class Access:
    """Owner checks over the conversation store's people (None: one person, no checks)."""

    people: People | None

    def session_owner(self, session_id: str) -> str:
        return self.people.owner_of(session_id) if self.people is not None else LOCAL_NAME

    def claim_session(self, person: Person, session_id: str) -> None:
        """Before a turn: the session becomes ``person``'s if nobody has it yet; someone
        else's raises as an unknown session would."""
        if self.people is None:
            return
        if not person.owns(self.people.claim(session_id, person.name)):
            raise no_session(session_id)

    def write_session(self, person: Person, session_id: str) -> None:
        """Before anything that changes an existing session (feedback, replay, approval,
        retry, stop): only its owner may."""
        if not person.owns(self.session_owner(session_id)):
            raise no_session(session_id)

    def read_session(self, person: Person, session_id: str) -> None:
        """Before anything that reads a session: its owner, or an admin (audited)."""
        self.read(person, "session", session_id, self.session_owner(session_id), no_session)

    def read(
        self,
        person: Person,
        kind: str,
        item: str,
        owner: str | None,
        unknown: Callable[[str], NotFound],
    ) -> None:
        """``person`` may read ``owner``'s ``item``, or ``unknown(item)`` is raised."""
        if person.owns(owner):
            return
        if person.admin and self.people is not None:
            self.people.admin_read(person.name, kind, item, owner or LOCAL_NAME)
            return
        raise unknown(item)

    def listing_owner(self, person: Person, everyone: bool = False) -> str | None:
        """Whose things a list shows: the person's own, or (an admin asking for
        ``everyone``) all, written down as one admin read."""
        if everyone and person.admin:
            if self.people is not None:
                self.people.admin_read(person.name, "list", "*", "*")
            return None
        return person.name

    def own_only(
        self, person: Person, rows: Sequence[T], session_of: Callable[[T], str]
    ) -> list[T]:
        """The rows (votes, audit records) whose session is ``person``'s."""
        if self.people is None:
            return list(rows) if person.owns(LOCAL_NAME) else []
        owners = self.people.owners_of(session_of(row) for row in rows)
        return [row for row in rows if person.owns(owners[session_of(row)])]

    def configured(self) -> bool:
        """Whether people are configured (every request must then say who it is)."""
        return self.people is not None and self.people.configured()

    # -- who is asking: the questions a sign-in asks ---------------------------------------

    def named(self, name: str) -> Person | None:
        """The configured person of that name (with their admin flag), or None."""
        return self.people.get(name) if self.people is not None else None

    def token_holder(self, token: str) -> Person | None:
        """The person whose current token ``token`` is, or None."""
        return self.people.by_token(token) if self.people is not None else None

    def standing(self, name: str | None) -> tuple[bool, str | None]:
        """Whether anyone is configured, and the hash of ``name``'s current token (None: no
        such person), in one statement (the app asks it on every request)."""
        return self.people.standing(name) if self.people is not None else (False, None)

    def note_read(self, admin: str, kind: str, item: str, owner: str) -> None:
        """Write down that ``admin`` read ``owner``'s ``kind`` ``item`` (``--as``, a store
        read on LangGraph Server); nothing when nobody is configured."""
        if self.people is not None:
            self.people.admin_read(admin, kind, item, owner)


def people_alone(settings: Settings, create: bool = False) -> People | None:
    """The conversation store's people opened alone, for what opens no agent (a command,
    LangGraph Server's auth); None while there can be none: a store in memory, or a SQLite
    file not made yet (a read must not create the database as a side effect) unless
    ``create``."""
    # lazy: langgraph, langchain_core, local2.storage: ~96 ms, 218 modules at MCP start
    from local2.storage import open_people, votes_path

    kind = settings.system.checkpointer
    if kind == "memory" and not create:
        return None
    if kind == "sqlite" and not create and not Path(votes_path(settings)).exists():
        return None
    return open_people(settings)


@contextmanager
def opened_access(settings: Settings) -> Iterator[Access]:
    """Owner checks over the store's people (opened alone, closed after), for a command
    that opens no agent."""
    people = people_alone(settings)
    try:
        yield Access(people)
    finally:
        if people is not None:
            people.close()
