"""Who is asking: the person a request, a turn or a command acts for.

With no people configured everything belongs to :data:`LOCAL` (one person: loopback, or the
single ``LOCAL2_API_TOKEN``). With people configured (``local2 users add``), each request
carries its person, and every session, research run, engram and vote belongs to one.
"""

from __future__ import annotations

from dataclasses import dataclass

LOCAL_NAME = "local"


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
