"""The scheduler inside a server (``local2 serve``, ``local2 ui``): started when the server
opens, stopped when it closes, off with ``watch.enabled: false``.

Every server process runs one, each looking at the same watch table; the table's claims
decide who runs a due time (:mod:`local2.watch.due`), so several processes on one Postgres
run each due time once and none of them is special. The research a due time needs is opened
only when one comes (``research``, called then), so a server whose watches never fall due
pays for looking alone (``bench/watch_idle.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from local2.service.research import Research
from local2.service.watches._desk import WatchDesk
from local2.watch import DueRun, WatchScheduler

log = logging.getLogger(__name__)


class Watching:
    """This process's scheduler over ``desk``; :meth:`poke` when a watch was added or
    resumed here, so its first due time is not left to the next look."""

    def __init__(self, desk: WatchDesk, research: Callable[[], Research]) -> None:
        self.desk = desk
        self._research = research
        settings = desk.settings.watch
        self.scheduler = WatchScheduler(
            desk.due, self._run, look_every_s=settings.look_every_s, workers=settings.workers
        )
        self.started = False

    # JSON kept with the due time's run (contracts.watch.WhatChanged), as RunWatch returns
    def _run(self, claim: DueRun) -> dict[str, Any]:
        return self.desk.runner(self._research())(claim)

    def start(self) -> None:
        self.scheduler.start()
        self.started = True
        self.desk.changed.append(self.poke)
        log.info("watches: the scheduler runs in this process")

    def poke(self) -> None:
        if self.started:
            self.scheduler.poke()

    def stop(self) -> None:
        """Stop looking; a run going on here is left to its lease (taken over elsewhere, or
        here after a restart)."""
        if self.started:
            self.started = False
            if self.poke in self.desk.changed:
                self.desk.changed.remove(self.poke)
            self.scheduler.stop(wait=False)
            log.info("watches: the scheduler stopped in this process")
