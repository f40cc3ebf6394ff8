"""Session (and research run) locks that other processes see.

One turn at a time per session within a process is :class:`local2.service.chat.Turns`'s
job; a store several processes share (Postgres) also needs a lock they all see
(:class:`local2.storage._postgres.AdvisoryLocks`). A store only this process uses needs none:
this base class.
"""

from __future__ import annotations

from collections.abc import Callable


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
