"""A person's watches, for the surfaces (``local2 watch``; the API and the app to come): add,
list, show, pause, resume, remove, run now, and one pass over what is due.

Each person's watches are their own: another's watch is as unknown as one that never was
(:class:`~local2.errors.UnknownWatch`). What leaves here is a view (``contracts.watch``):
Apprise targets only as ``url(privacy=True)`` shows them, and any error text with their
secrets masked, so no secret reaches the CLI, the API, the app, a log or an event.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, get_args

from local2.config import Settings
from local2.contracts import (
    DeliveryView,
    Keep,
    NoticeView,
    Person,
    Sources,
    WatchDetail,
    WatchRunView,
    WatchView,
)
from local2.errors import InvalidInput, UnknownWatch
from local2.notify import redacted, scrub, secrets_of
from local2.service.research import Research, run_scope
from local2.service.watches._feed import WatchFeed
from local2.service.watches._runner import WatchRunner
from local2.storage import DeliveryRow, NoticeRow, WatchRow, WatchRunRow, WatchStore, open_watches
from local2.watch import DueRun, DueRuns, add_watch, new_watch, parse_schedule


def open_watch_desk(settings: Settings) -> WatchDesk:
    """The watches kept beside the person's data (closed with :meth:`WatchDesk.close`)."""
    return WatchDesk(settings, open_watches(settings))


class WatchDesk:
    """The watches of whoever asks, over one store."""

    def __init__(self, settings: Settings, store: WatchStore) -> None:
        self.settings = settings
        self.store = store
        self.due = DueRuns(
            store, lease_s=settings.watch.lease_s, max_attempts=settings.watch.max_takeovers
        )
        self.feed = WatchFeed(store, settings)
        # Called after a watch is added or resumed here (the scheduler looks again at once).
        self.changed: list[Callable[[], None]] = []

    def close(self) -> None:
        self.store.close()

    # -- the watches ------------------------------------------------------------------------

    def add(
        self,
        person: Person,
        question: str,
        schedule: str,
        *,
        timezone: str | None = None,
        targets: Sequence[str] = (),
        notify_on: str = "changes",
        max_rounds: int | None = None,
        sources: str = "web",
        keep: str | None = None,
        scope: Mapping[str, Any] | None = None,  # since, until, domains, exclude_domains (JSON)
    ) -> WatchView:
        """A new watch of ``person``'s, checked whole first (nothing half-created). ``scope``:
        the watch's own, for every run and round, kept as typed (``past year`` counts back
        from each run) and checked now as research checks it."""
        row = new_watch(
            person.name,
            question,
            schedule,
            timezone or self.settings.watch.timezone,
            targets=targets,
            notify_on=notify_on,
            options=_options(max_rounds, sources, keep, _scope(scope, self.settings)),
            minimum_s=self.settings.watch.minimum_interval_s,
        )
        added = view(add_watch(self.store, row, max_per_person=self.settings.watch.max_per_person))
        self._changed()
        return added

    def watches(self, person: Person) -> list[WatchView]:
        return [view(row) for row in self.store.owned_by(person.name)]

    def show(self, person: Person, watch_id: str, limit: int = 20) -> WatchDetail:
        """The watch with its latest runs and delivery attempts."""
        row = self.own(person, watch_id)
        secrets = _secrets(row)
        return {
            "watch": view(row),
            "runs": [run_view(r, secrets) for r in self.store.runs(watch_id, limit)],
            "deliveries": [
                delivery_view(d, secrets) for d in self.store.deliveries(watch_id, limit)
            ],
        }

    def pause(self, person: Person, watch_id: str) -> WatchView:
        self.own(person, watch_id)
        self.store.set_paused(watch_id, True, None)
        return view(self.own(person, watch_id))

    def resume(self, person: Person, watch_id: str) -> WatchView:
        """Unpaused, due next at the schedule's first time after now (none missed are made up)."""
        row = self.own(person, watch_id)
        schedule = parse_schedule(row["schedule"], row["timezone"], anchor=row["anchor"])
        self.store.set_paused(watch_id, False, schedule.next_after_ts(time.time()))
        self._changed()
        return view(self.own(person, watch_id))

    def remove(self, person: Person, watch_id: str) -> None:
        """The watch and its runs' records (the research runs themselves stay)."""
        self.own(person, watch_id)
        self.store.remove(watch_id)

    def _changed(self) -> None:
        for hook in list(self.changed):
            hook()

    def own(self, person: Person, watch_id: str) -> WatchRow:
        row = self.store.get(watch_id.strip(), owner=person.name)
        if row is None:
            raise UnknownWatch(
                f"No watch {watch_id!r} among yours.", "List yours with: local2 watch list"
            )
        return row

    # -- running ----------------------------------------------------------------------------

    def runner(self, research: Research) -> WatchRunner:
        return WatchRunner(research, self.store, self.settings.watch)

    def run_now(self, person: Person, watch_id: str, research: Research) -> WatchRunView:
        """Run the watch once now, here, outside its schedule (which stays as it is)."""
        claim = self.due.run_now(self.own(person, watch_id), self.runner(research))
        if claim is None:
            raise InvalidInput(
                f"Watch {watch_id} has a run made this very moment already.", "Try again."
            )
        return self._ran(claim)

    def anything_due(self, now: float | None = None) -> bool:
        """Whether a pass now would run anything (a due time come, or a run to take over)."""
        moment = time.time() if now is None else now
        return bool(self.store.due(moment, 1) or self.store.lapsed(moment, 1))

    def run_due(self, research: Research, now: float | None = None) -> list[WatchRunView]:
        """One pass over everyone's due watches (``local2 watch run-due``, a systemd timer):
        each due time claimed once across processes and run here in turn."""
        return [self._ran(c) for c in self.due.run_due(self.runner(research), now)]

    def _ran(self, claim: DueRun) -> WatchRunView:
        found = [r for r in self.store.runs(claim.watch["watch_id"], 100) if r["due"] == claim.due]
        return run_view(found[0], _secrets(claim.watch))

    # -- notices ----------------------------------------------------------------------------

    def notices(self, person: Person, unread: bool = False, limit: int = 50) -> list[NoticeView]:
        return [notice_view(n) for n in self.store.notices(person.name, limit, unread)]

    def mark_read(self, person: Person, notice_ids: Sequence[str]) -> None:
        self.store.mark_read(person.name, notice_ids)


SCOPE_KEYS = ("since", "until", "domains", "exclude_domains")


# the watch's own scope as stored (JSON: WatchRow.options["scope"])
def _scope(given: Mapping[str, Any] | None, settings: Settings) -> dict[str, Any]:
    """The scope keys given, checked by research's own rules: dates as typed (``past year``
    counts back from each run), domains as lists of host names."""
    kept: dict[str, Any] = {}  # JSON, as WatchRow.options["scope"]
    for key in SCOPE_KEYS:
        value = (given or {}).get(key)
        if value in (None, "", []):
            continue
        if key in ("domains", "exclude_domains"):
            value = [value] if isinstance(value, str) else list(value)
        kept[key] = value
    record = run_scope(kept, settings)  # refused as `local2 research --since ...` refuses it
    if record is not None:  # domains normalised: nature.com for https://www.Nature.com
        if "domains" in kept:
            kept["domains"] = record["domains"]
        if "exclude_domains" in kept:
            kept["exclude_domains"] = record["exclude_domains"]
    return kept


# the watch's options as stored (JSON: WatchRow.options)
def _options(
    max_rounds: int | None,
    sources: str,
    keep: str | None,
    scope: dict[str, Any] | None = None,  # JSON: WatchRow.options["scope"]
) -> dict[str, Any]:  # JSON: WatchRow.options
    """The run's options, checked as the research command checks them."""
    if max_rounds is not None and not 1 <= max_rounds <= 10:
        raise InvalidInput(f"max_rounds {max_rounds} is out of range.", "Give 1 to 10, e.g. 2.")
    if sources not in get_args(Sources):
        raise InvalidInput(
            f"Unknown sources {sources!r}.", f"Use one of: {', '.join(get_args(Sources))}."
        )
    if keep is not None and keep not in get_args(Keep):
        raise InvalidInput(f"Unknown keep {keep!r}.", f"Use one of: {', '.join(get_args(Keep))}.")
    options: dict[str, Any] = {"sources": sources}  # JSON, as WatchRow.options
    if max_rounds is not None:
        options["max_rounds"] = max_rounds
    if keep is not None:
        options["keep"] = keep
    if scope:
        options["scope"] = scope
    return options


def _secrets(row: WatchRow) -> list[str]:
    found: set[str] = set()
    for url in row["targets"]:
        try:
            found.update(secrets_of(url))
        except InvalidInput:  # a target Apprise no longer reads: mask all of it
            found.add(url)
    return sorted(found, key=len, reverse=True)


def _shown(url: str) -> str:
    try:
        return redacted(url)
    except InvalidInput:  # a target Apprise no longer reads: its scheme alone
        return url.split("://", 1)[0] + "://****"


def view(row: WatchRow) -> WatchView:
    return {
        "watch_id": row["watch_id"],
        "question": row["question"],
        "schedule": row["schedule"],
        "timezone": row["timezone"],
        "notify_on": row["notify_on"],
        "targets": [_shown(url) for url in row["targets"]],
        "paused": row["paused"],
        "next_due": row["next_due"],
        "options": dict(row["options"]),
        "created_at": row["created_at"],
    }


def run_view(row: WatchRunRow, secrets: list[str]) -> WatchRunView:
    changes: Any = row["summary"]
    return {
        "due": row["due"],
        "run_id": row["run_id"],
        "status": row["status"],
        "attempts": row["attempts"],
        "error": scrub(row["error"], secrets) if row["error"] else None,
        "started_at": row["started_at"],
        "finished_at": row["finished_at"],
        "nothing_new": None if changes is None else bool(changes.get("nothing_new")),
        "changes": changes,
    }


def delivery_view(row: DeliveryRow, secrets: list[str]) -> DeliveryView:
    return {
        "due": row["due"],
        "target": row["target"],
        "attempt": row["attempt"],
        "ok": row["ok"],
        "error": scrub(row["error"], secrets) if row["error"] else None,
        "at": row["at"],
    }


def notice_view(row: NoticeRow) -> NoticeView:
    return {
        "notice_id": row["notice_id"],
        "watch_id": row["watch_id"],
        "run_id": row["run_id"],
        "title": row["title"],
        "body": row["body"],
        "created_at": row["created_at"],
        "unread": row["read_at"] is None,
    }
