"""What is opened together and closed together: a store's parts over one connection pool.

:class:`Storage` holds a session's conversation (checkpoints, turn log, session locks, the
people and whose each session is, and the arena's votes where the store keeps them);
:class:`ResearchStorage` holds research runs (checkpoints, the run list, run locks, the
runs' inboxes).
:mod:`local2.storage._open` decides which engine fills them.

Session (and research run) locks that other processes see.

One turn at a time per session within a process is :class:`local2.service.chat.Turns`'s
job; a store several processes share (Postgres) also needs a lock they all see
(:class:`local2.storage._postgres.AdvisoryLocks`). A store only this process uses needs none:
this base class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from langgraph.checkpoint.base import BaseCheckpointSaver

from local2.storage._people import People
from local2.storage._research_runs import RunIndex, SteerInbox
from local2.storage._turn_log import TurnLog
from local2.storage._votes import VoteLog


class ClosedTogether:
    """Parts opened together (over one pool) and closed together, by ``closers`` in order."""

    closers: list[Callable[[], None]]

    def close(self) -> None:
        for close in self.closers:
            close()
        self.closers.clear()


@dataclass
class Storage(ClosedTogether):
    checkpointer: BaseCheckpointSaver[str] | None  # None: the platform brings its own
    turn_log: TurnLog
    locks: SharedLocks
    closers: list[Callable[[], None]] = field(default_factory=list)
    # The arena's votes, when the store keeps them too (Postgres); else opened on first use
    # (``local2.graph._compare.votes_of``).
    votes: VoteLog | None = None
    # People and whose each session is (None: the platform's own auth decides).
    people: People | None = None


@dataclass
class ResearchStorage(ClosedTogether):
    checkpointer: BaseCheckpointSaver[str]
    index: RunIndex
    locks: SharedLocks
    inbox: SteerInbox  # what the person says to running runs
    closers: list[Callable[[], None]] = field(default_factory=list)


class SharedLocks:
    """Session locks other processes see. A store only this process uses needs none (one
    turn per session within the process is :class:`local2.service.chat.Turns`'s job)."""

    remote = False  # taking a lock is a round trip to a server (never on an event loop)

    def acquire(self, session_id: str, blocking: bool = True) -> bool:
        """Take the session's lock (False if ``blocking`` is off and another holds it)."""
        return True

    def release(self, session_id: str) -> None:
        """Let the next turn of the session go ahead (may be called from another thread)."""

    def held_elsewhere(self, session_id: str) -> bool:
        """Whether another process holds the lock now (none can, without a shared store)."""
        return False

    def announce(self, session_id: str) -> None:
        """Tell the other processes a turn of the session is about to start here (none)."""

    def listen(self, heard: Callable[[str], None]) -> None:
        """Call ``heard(session_id)`` when another process announces a turn (none can)."""

    def close(self) -> None:
        """Nothing to release."""
