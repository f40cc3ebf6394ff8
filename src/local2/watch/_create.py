"""A new watch, checked whole before anything is kept: its schedule (and the minimum
interval), its time zone, each Apprise URL, how it notifies, and the person's room for
another watch. Bad input is an :class:`~local2.errors.InvalidInput` with an example, and
nothing is half-created."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

from local2.errors import InvalidInput
from local2.notify import plugin_for
from local2.storage import WatchRow, WatchStore
from local2.watch._schedule import parse_schedule
from local2.watch._telling import NOTIFY_ON

MAX_QUESTION = 2000


def new_watch(
    owner: str,
    question: str,
    schedule: str,
    timezone: str,
    *,
    targets: Sequence[str] = (),
    notify_on: str = "changes",
    options: dict[str, Any] | None = None,  # the run's options, checked by the surface (JSON)
    minimum_s: float = 0,
    now: float | None = None,
) -> WatchRow:
    """The watch as it will be stored, its first due time set; raises on bad input."""
    moment = time.time() if now is None else now
    asked = " ".join(question.split())
    if not asked:
        raise InvalidInput(
            "A watch needs a question.", 'e.g. "What changed in EU AI Act guidance?"'
        )
    if len(asked) > MAX_QUESTION:
        raise InvalidInput(f"The question is over {MAX_QUESTION} characters.", "Shorten it.")
    if notify_on not in NOTIFY_ON:
        raise InvalidInput(
            f"Unknown notify_on {notify_on!r}.", f"Use one of: {', '.join(NOTIFY_ON)}."
        )
    parsed = parse_schedule(schedule, timezone, minimum_s=minimum_s, anchor=moment)
    for url in targets:
        plugin_for(url)
    return {
        "watch_id": f"w-{uuid.uuid4().hex[:12]}",
        "owner": owner,
        "question": asked,
        "schedule": parsed.text,
        "timezone": parsed.timezone,
        "anchor": moment,
        "options": dict(options or {}),
        "targets": [url.strip() for url in targets],
        "notify_on": notify_on,
        "paused": False,
        "next_due": parsed.next_after_ts(moment),
        "created_at": moment,
        "updated_at": moment,
    }


def add_watch(store: WatchStore, row: WatchRow, *, max_per_person: int) -> WatchRow:
    """Keep ``row`` unless its owner already has ``max_per_person`` watches."""
    if store.count(row["owner"]) >= max_per_person:
        raise InvalidInput(
            f"You have {max_per_person} watches, the most allowed here.",
            "Remove one (local2 watch remove ID), or ask for watch.max_per_person to be raised.",
        )
    store.add(row)
    return row
