"""Due runs, claimed once across every process: the one pass a scheduler (or ``local2 watch
run-due``) makes.

A pass claims each watch whose due time has come (the store's conditional update: one
process wins each due time), moving it on to the first fire time after *now*, so downtime
that missed several due times makes one catch-up run. It also takes over runs whose lease
lapsed (the process running them died), up to ``max_attempts`` processes each. Running a
claim renews its lease until it ends; the runner's failure is recorded, never raised.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from local2.errors import InvalidInput
from local2.storage import WatchRow, WatchStore, run_id_for
from local2.watch.schedule import parse_schedule

log = logging.getLogger(__name__)
DONE, FAILED = "done", "failed"


@dataclass(frozen=True)
class DueRun:
    """A due time this process claimed: the watch, the time, its research run's id, the how-
    manieth process takes it on, and the last finished run to compare with (and when that
    run started: this one looks first at what appeared since)."""

    watch: WatchRow = field(repr=False)  # its targets hold secrets: never in a repr
    due: float
    run_id: str
    attempt: int
    previous_run_id: str | None
    previous_started_at: float | None = None


# Runs a claimed due time to its end; what it returns (what changed) is kept with the run.
RunWatch = Callable[[DueRun], dict[str, Any] | None]  # JSON: contracts.watch.WhatChanged


def process_name() -> str:
    """Who claims, as the runs table shows it: host, process id and a random tail."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class DueRuns:
    """Claims due times for this process and runs them, with leases renewed meanwhile."""

    def __init__(
        self,
        store: WatchStore,
        *,
        claimer: str | None = None,
        lease_s: float = 120.0,
        max_attempts: int = 3,
    ) -> None:
        self.store = store
        self.claimer = claimer or process_name()
        self.lease_s = lease_s
        self.max_attempts = max_attempts
        self._held: set[tuple[str, float]] = set()
        self._guard = threading.Lock()

    def claim(self, now: float | None = None) -> list[DueRun]:
        """Every due time that has come and every lapsed run, claimed for this process."""
        moment = time.time() if now is None else now
        claimed = [c for w, d in self.store.due(moment) if (c := self._claim_one(w, d, moment))]
        for run in self.store.lapsed(moment):
            if run["attempts"] >= self.max_attempts:
                reason = f"the process running it stopped {run['attempts']} times"
                if self.store.give_up(run, reason):
                    log.warning(
                        "watch %s: gave up its run due %s: %s", run["watch_id"], run["due"], reason
                    )
                continue
            watch = self.store.get(run["watch_id"])
            if watch is not None and self.store.take_over(run, self.claimer, self.lease_s):
                claimed.append(self._due_run(watch, run["due"], run["attempts"] + 1, run["run_id"]))
        return claimed

    def _claim_one(self, watch_id: str, due: float, now: float) -> DueRun | None:
        watch = self.store.get(watch_id)
        if watch is None:
            return None
        try:
            schedule = parse_schedule(watch["schedule"], watch["timezone"], anchor=watch["anchor"])
        except InvalidInput as exc:  # a time zone this machine no longer knows, say
            log.error("watch %s cannot be scheduled: %s", watch_id, exc.message)
            return None
        next_due = schedule.next_after_ts(max(now, due))
        run_id = self.store.claim(watch_id, due, next_due, self.claimer, self.lease_s)
        if run_id is None:
            return None
        return self._due_run(watch, due, 1, run_id)

    def _due_run(
        self, watch: WatchRow, due: float, attempt: int, run_id: str | None = None
    ) -> DueRun:
        with self._guard:
            self._held.add((watch["watch_id"], due))
        last = self.store.last_done(watch["watch_id"], before=due)
        return DueRun(
            watch,
            due,
            run_id or run_id_for(watch["watch_id"], due),
            attempt,
            last["run_id"] if last else None,
            last["started_at"] if last else None,
        )

    def run(self, claim: DueRun, runner: RunWatch) -> bool:
        """Run one claim to its end and record how it ended; whether it succeeded."""
        watch_id = claim.watch["watch_id"]
        try:
            summary = runner(claim)
        except Exception as exc:  # a failed run is recorded; the schedule goes on
            log.exception("watch %s: the run due %s failed", watch_id, claim.due)
            self.store.finish(watch_id, claim.due, self.claimer, FAILED, error=str(exc)[:2000])
            return False
        finally:
            with self._guard:
                self._held.discard((watch_id, claim.due))
        if not self.store.finish(watch_id, claim.due, self.claimer, DONE, summary=summary):
            log.warning("watch %s: the run due %s was taken over meanwhile", watch_id, claim.due)
        return True

    def run_now(self, watch: WatchRow, runner: RunWatch, now: float | None = None) -> DueRun | None:
        """Run ``watch`` once now, outside its schedule, here (``local2 watch run``); the
        claim, or None if it already has a run due this very millisecond (run ids count them
        for runs made now: two in one second are two runs)."""
        due = round(time.time() if now is None else now, 3)
        run_id = self.store.start_now(watch["watch_id"], due, self.claimer, self.lease_s)
        if run_id is None:
            return None
        claim = self._due_run(watch, due, 1, run_id)
        with self.renewing():
            self.run(claim, runner)
        return claim

    def renew(self) -> None:
        """Extend the lease of every claim this process holds (queued or running)."""
        with self._guard:
            held = sorted(self._held)
        for watch_id, due in held:
            try:
                kept = self.store.renew(watch_id, due, self.claimer, self.lease_s)
            except Exception:  # the database away for a moment: the next beat tries again
                log.exception(
                    "watch %s: the lease of the run due %s was not renewed", watch_id, due
                )
                continue
            if not kept:
                log.warning("watch %s: lost the run due %s to another process", watch_id, due)

    def holding(self) -> int:
        with self._guard:
            return len(self._held)

    def run_due(self, runner: RunWatch, now: float | None = None) -> list[DueRun]:
        """One pass, each claim run here in turn (``local2 watch run-due``, a systemd timer)."""
        claims = self.claim(now)
        with self.renewing():
            for claim in claims:
                self.run(claim, runner)
        return claims

    @contextmanager
    def renewing(self) -> Iterator[None]:
        """Leases renewed every third of a lease on a thread of their own, while inside."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.lease_s / 3):
                self.renew()

        beating = threading.Thread(target=beat, name="local2-watch-leases", daemon=True)
        beating.start()
        try:
            yield
        finally:
            stop.set()
            beating.join()
