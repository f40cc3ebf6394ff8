"""Who is asking: the person a request, a turn or a command acts for.

With no people configured everything belongs to :data:`LOCAL` (one person: loopback, or the
single ``LOCAL2_API_TOKEN``). With people configured (``local2 users add``), each request
carries its person, and every session, research run, engram and vote belongs to one.

The team's shared facts are the one exception: kept under the reserved owner
:data:`TEAM_NAME` (never a person's name), written only on purpose by local or an admin
(``local2 memory save --team``), and recalled for everyone beside their own memory.
"""

from __future__ import annotations

from dataclasses import dataclass

LOCAL_NAME = "local"
TEAM_NAME = "team"  # the owner of the team's shared facts; no person may take the name


@dataclass(frozen=True)
class Person:
    """A signed-in person. ``admin`` may read everyone's sessions and runs (each such read
    is written to the audit log) but writes only their own."""

    name: str
    admin: bool = False

    def owns(self, owner: str | None) -> bool:
        """Whether something owned by ``owner`` (None: from before owners, so local's) is
        this person's own."""
        return (owner or LOCAL_NAME) == self.name


LOCAL = Person(LOCAL_NAME)


def may_write_team_facts(person: Person) -> bool:
    """Whether ``person`` may write or delete the team's shared facts: local (this
    machine's terminal, or the single token) or an admin. Everyone reads them."""
    return person.name == LOCAL_NAME or person.admin
