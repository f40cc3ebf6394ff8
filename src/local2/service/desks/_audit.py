"""The audit log and the arena's votes as a person may read them (``local2 runs``,
``local2 arena``, ``GET /arena``, the app's Arena tab): the turns and votes of their own
sessions only. Another person's query id answers as an unknown one does; an admin reading
someone else's turn, or asking for everyone's votes, is written down
(:class:`~local2.service.access.Access`). And MCP calls are written to the audit log
(:func:`audit_call`).

The commands read these without an agent: the audit log is files under the data directory,
the votes a table of the conversation store, opened here and closed after.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from local2.config import Settings
from local2.contracts import Person
from local2.errors import NotFound
from local2.service.access import Access

if TYPE_CHECKING:
    from local2.contracts import AuditRun
    from local2.storage import Vote, Voter


def own_runs(
    settings: Settings, access: Access, person: Person, session: str | None, limit: int
) -> list[AuditRun]:
    """The latest ``limit`` logged turns of ``person``'s own sessions (of ``session`` only,
    when given). With people configured the whole log is read and filtered: others' turns
    must not take the places."""
    from local2.storage import list_runs  # lazy: local2.storage: ~4 ms, 1 module at MCP start

    if not access.configured():  # everything is local's
        return access.own_only(person, list_runs(settings, session, limit), _session)
    rows = list_runs(settings, session, sys.maxsize)
    return access.own_only(person, rows, _session)[:limit]


def own_run(
    settings: Settings, access: Access, person: Person, query_id: str
) -> dict[str, Any] | None:  # its audit file's JSON
    """One logged turn of ``person``'s (or, for an admin, anyone's: the read is written
    down), by its query id (or ``session/query_id``); None when there is none they may
    read."""
    from local2.storage import show_run  # lazy: local2.storage: ~6 ms, 1 module at MCP start

    record = show_run(settings, query_id)
    if record is None:
        return None
    owner = access.session_owner(_session(record))
    try:
        access.read(person, "audit", query_id, owner, NotFound)
    except NotFound:
        return None
    return record


def visible_votes(
    access: Access, person: Person, votes: Sequence[Vote], everyone: bool = False
) -> list[Vote]:
    """The votes of ``person``'s own sessions; all of them for an admin asking for
    ``everyone`` (written down as one admin read)."""
    if access.listing_owner(person, everyone) is None:
        return list(votes)
    return access.own_only(person, votes, lambda vote: vote.session_id)


@dataclass(eq=False)
class VoteDesk:
    """The arena's votes as an agent reads them: all of them (people's, the judge's), or
    those of a person's own sessions."""

    read: Callable[[Voter | None], list[Vote]]  # the vote log's votes, by voter or all
    access: Access

    def all(self, voter: Voter | None = None) -> list[Vote]:
        """The arena's votes so far (people's or the judge's, or both), oldest first."""
        return self.read(voter)

    def own(self, person: Person, everyone: bool = False) -> list[Vote]:
        """The votes of ``person``'s own sessions (an admin's ``everyone``: all, written
        down as one admin read), oldest first."""
        return visible_votes(self.access, person, self.all(), everyone)


def own_votes(settings: Settings, access: Access, person: Person) -> list[Vote]:
    """The votes of ``person``'s own sessions, read from the store without an agent."""
    # lazy: langgraph, langchain_core, local2.storage: ~356 ms, 218 modules at MCP start
    from local2.storage import open_votes

    log = open_votes(settings)
    try:
        votes = log.votes()
    finally:
        log.close()
    return visible_votes(access, person, votes)


def audit_call(settings: Settings, call: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """Write one MCP call to the audit log: who made it and how (``person``,
    ``transport``), what (``method``, ``name``, the arguments, secrets redacted), how it
    ``ended`` and what it made (``ids``); never raises."""
    from local2.storage import write_call  # lazy: local2.storage: ~7 ms, 2 modules at MCP start

    write_call(settings, call, arguments)


def _session(row: Mapping[str, Any]) -> str:  # a run listed, or an audit file's JSON
    return str(row.get("session_id") or "")
