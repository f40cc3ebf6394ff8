"""What is opened together and closed together: a store's parts over one connection pool.

:class:`Storage` holds a session's conversation (checkpoints, turn log, session locks, the
people and whose each session is, and the arena's votes where the store keeps them);
:class:`ResearchStorage` holds research runs (checkpoints, the run list, run locks, the
runs' inboxes).
:mod:`local2.storage._open` decides which engine fills them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from langgraph.checkpoint.base import BaseCheckpointSaver

from local2.storage._locks import SharedLocks
from local2.storage._people import People
from local2.storage._research_runs import RunIndex
from local2.storage._research_steers import SteerInbox
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
