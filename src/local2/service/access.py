"""Whose each thing is, checked on every read and write a person asks for.

Every surface asks here before it touches a session, a research run or a vote on a
person's behalf (:class:`~local2.contracts.people.Person`): the HTTP API per request, the app
per signed-in person, the CLI as local (or ``--as``). Someone else's id answers exactly as
an unknown one would (:class:`~local2.errors.NotFound` with the same message), so a person
cannot tell that it exists. An admin may read everyone's, and each such read is written
down (``local2_admin_reads``); writes are only ever the owner's.

With nobody configured everything is local's and nothing is written: the checks cost one
indexed lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from local2.contracts.people import LOCAL_NAME, Person
from local2.errors import NotFound, UnknownRun, UnknownTurn
from local2.storage.people import People

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
