"""The scheduler each ``local2 serve`` (or ``local2 ui``) process runs: APScheduler 3.

Its job store is in memory and this process's own: APScheduler 3's stores must never be
shared between schedulers (its user guide). It decides only *when this process looks*: at the
earliest due time in the watch table (a date trigger, re-armed after each look) and every
``look_every_s`` (for watches other processes added, and runs whose lease lapsed). *Who
runs* a due time is the watch table's conditional update (:mod:`._due`). Claimed runs go to a
thread pool of ``workers``; their leases are renewed every third of a lease.
"""

from __future__ import annotations

import contextlib
import logging
import time
from datetime import UTC, datetime

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from local2.watch._due import DueRuns, RunWatch

log = logging.getLogger(__name__)
LOOK, WAKE, RENEW = "local2-watch-look", "local2-watch-wake", "local2-watch-renew"
RUNS = "runs"  # the executor claimed runs go to


class WatchScheduler:
    """This process's part in running watches; :meth:`start` in a server, :meth:`stop` at
    its end (a run still going is left to its lease: another process takes it over)."""

    def __init__(
        self, due: DueRuns, runner: RunWatch, *, look_every_s: float = 30.0, workers: int = 2
    ) -> None:
        self.due = due
        self.runner = runner
        self.look_every_s = look_every_s
        self._scheduler = BackgroundScheduler(
            timezone=UTC,
            executors={"default": ThreadPoolExecutor(1), RUNS: ThreadPoolExecutor(workers)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )

    def start(self) -> None:
        now = datetime.now(UTC)
        self._scheduler.add_job(
            self.look, IntervalTrigger(seconds=self.look_every_s), id=LOOK, next_run_time=now
        )
        self._scheduler.add_job(
            self.due.renew, IntervalTrigger(seconds=max(self.due.lease_s / 3, 0.1)), id=RENEW
        )
        self._scheduler.start()

    def look(self) -> None:
        """Claim what is due, hand it to the run pool, and wake again at the next due time."""
        try:
            claims = self.due.claim()
        except Exception:  # the database away for a moment: the next look tries again
            log.exception("watches: looking for due runs failed")
            return
        for claim in claims:
            self._scheduler.add_job(self.due.run, args=(claim, self.runner), executor=RUNS)
        self._arm()

    def poke(self) -> None:
        """Look now (a watch was added or resumed through this process)."""
        self._scheduler.add_job(self.look, DateTrigger(), id=WAKE, replace_existing=True)

    def _arm(self) -> None:
        try:
            earliest = self.due.store.earliest_due()
        except Exception:
            log.exception("watches: reading the next due time failed")
            return
        if earliest is None or earliest <= time.time():  # none, or one that cannot be run
            self._disarm()
            return
        when = DateTrigger(run_date=datetime.fromtimestamp(earliest, UTC))
        self._scheduler.add_job(self.look, when, id=WAKE, replace_existing=True)

    def _disarm(self) -> None:
        with contextlib.suppress(JobLookupError):
            self._scheduler.remove_job(WAKE)

    def stop(self, wait: bool = False) -> None:
        """Stop looking; ``wait``: also for the runs going on here to end."""
        if self._scheduler.running:
            self._scheduler.shutdown(wait=wait)
