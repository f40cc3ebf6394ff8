"""A watch's due time, run: one ordinary research run (its ledger, library keep, time travel
and critic, opened as any run by its id), what changed against the watch's last finished
run, and the notice, when the watch asked for one.

A research run that fails is tried again with backoff (``watch.run_attempts``), resumed from
its checkpoints under the same id; when the tries run out the due time is recorded as
failed (:class:`~local2.watch.DueRuns` keeps the error) and the schedule goes on, already
moved to the next due time when this one was claimed. A run taken over from a process that
died resumes the same way. Telling never fails the run: a delivery that fails is retried
and recorded by :func:`~local2.watch.tell`, and a notice that cannot be kept is logged.

A run after the first looks first at what appeared since the last one: its first round
searches only sources published on or after the day the watch's last finished run started,
in the watch's time zone (``first_round_since``: pushed into each provider's own date filter,
SearXNG's ``time_range`` and the scholarly APIs' ones, and applied to dated hits); later
rounds search any date, and what changed does not call a source of last time that the run
did not look for "gone" (:func:`~local2.watch.what_changed`). A scope of the watch's own
(``since``/``until``/``domains``/``exclude_domains``) holds for every round, and the look-first
day narrows its first round only when it is later than the watch's ``since`` and not past its
``until`` (the person's window wins).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from local2.config import WatchSettings
from local2.contracts import Person, ResearchPayload, collect_research
from local2.errors import Local2Error, WatchRunFailed
from local2.notify import Backoff
from local2.service.research import Research, run_config
from local2.storage import WatchStore
from local2.watch import DueRun, tell, what_changed

log = logging.getLogger(__name__)
FINISHED = ("done", "stopped")  # a run with a report to compare


def delivery_backoff(settings: WatchSettings) -> Backoff:
    return Backoff(
        attempts=settings.delivery_attempts,
        first_wait_s=settings.delivery_wait_s,
        max_wait_s=settings.delivery_max_wait_s,
    )


# what research.stream takes as its scope (JSON: since, until, domains, ...)
def run_scope_of(claim: DueRun) -> dict[str, Any]:
    """The due time's research scope: the watch's own (``options.scope``, as typed), and the
    first round from the day its last finished run started, in the watch's time zone."""
    scope: dict[str, Any] = dict(claim.watch["options"].get("scope") or {})  # JSON, as typed
    if claim.previous_started_at is not None:
        zone = ZoneInfo(claim.watch["timezone"])
        day = datetime.fromtimestamp(claim.previous_started_at, zone).date()
        scope["first_round_since"] = day.isoformat()
    return scope


def run_link(settings: WatchSettings, run_id: str) -> str:
    """Where a notice sends its person to read the run."""
    if settings.link_base:
        return f"{settings.link_base.rstrip('/')}/research/{run_id}"
    return f"Open the run: local2 research --resume {run_id}"


class WatchRunner:
    """Runs claimed due times (a :data:`~local2.watch.RunWatch`) through ``research``."""

    def __init__(
        self,
        research: Research,
        store: WatchStore,
        settings: WatchSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.research = research
        self.store = store
        self.settings = settings
        self.sleep = sleep

    # JSON kept with the due time's run (contracts.watch.WhatChanged), as RunWatch returns
    def __call__(self, claim: DueRun) -> dict[str, Any]:
        """Research, compare, tell; what changed (kept with the due time's run)."""
        person = Person(claim.watch["owner"])
        current = self._researched(claim, person)
        changes = what_changed(self._previous(claim, person), current)
        try:
            tell(
                self.store,
                claim,
                changes,
                link=run_link(self.settings, claim.run_id),
                backoff=delivery_backoff(self.settings),
                sleep=self.sleep,
            )
        except Exception:  # the database away for a moment: the run itself is kept
            log.exception(
                "watch %s: the notice of run %s was not kept", claim.watch["watch_id"], claim.run_id
            )
        return dict(changes)

    def _researched(self, claim: DueRun, person: Person) -> ResearchPayload:
        retrying = Retrying(
            stop=stop_after_attempt(self.settings.run_attempts),
            wait=wait_exponential(multiplier=self.settings.run_retry_wait_s, max=3600),
            retry=retry_if_exception_type(Exception),
            reraise=True,
            sleep=self.sleep,
        )
        payload: ResearchPayload | None = None
        for attempt in retrying:
            with attempt:
                payload = self._research_once(claim, person)
        assert payload is not None  # the last attempt either returned or raised
        return payload

    def _research_once(self, claim: DueRun, person: Person) -> ResearchPayload:
        """Start the due time's run, or resume it (a try before, or a process, left it)."""
        options = claim.watch["options"]
        if self.research.graph.get_state(run_config(claim.run_id)).values:
            payload = self.research.resume_run(claim.run_id, person=person)
        else:
            items = self.research.stream(
                claim.watch["question"],
                run_id=claim.run_id,
                person=person,
                max_rounds=options.get("max_rounds"),
                sources=options.get("sources", "web"),
                keep=options.get("keep"),
                scope=run_scope_of(claim),
            )
            payload = collect_research(items)
        if payload["status"] not in FINISHED:
            raise WatchRunFailed(
                f"The research run {claim.run_id} ended {payload['status']}.",
                f"It is tried again; see it with: local2 research --resume {claim.run_id}",
            )
        return payload

    def _previous(self, claim: DueRun, person: Person) -> ResearchPayload | None:
        """The last finished run's payload (None: this is the first, or it is gone)."""
        if claim.previous_run_id is None:
            return None
        try:
            return self.research.payload(claim.previous_run_id, person)
        except Local2Error as exc:  # deleted since: this run is compared with none
            log.warning("watch %s: its last run cannot be read (%s)", claim.watch["watch_id"], exc)
            return None
