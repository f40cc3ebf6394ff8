"""Telling the person what a run found: a notice (the app's list, the Atom feed) and a
delivery to each Apprise target, as the watch asks (``notify_on``: ``changes``, the default;
``always``, "nothing new" too; ``never``).

A run taken over from a process that died tells again only what was not told: its notice
is kept once (its id is the run's), and a target a delivery already reached is skipped.
Nothing here raises into the scheduler: a delivery that fails is retried, recorded and
shown on the watch.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from local2.contracts import WhatChanged
from local2.errors import InvalidInput
from local2.notify import Attempt, Backoff, deliver, redacted
from local2.storage import NoticeRow, WatchStore
from local2.watch._due import DueRun
from local2.watch._notice import notice_text

NOTIFY_ON = ("changes", "always", "never")


def should_tell(notify_on: str, changes: WhatChanged) -> bool:
    return notify_on == "always" or (notify_on == "changes" and not changes["nothing_new"])


def tell(
    store: WatchStore,
    claim: DueRun,
    changes: WhatChanged,
    *,
    link: str,
    backoff: Backoff | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> NoticeRow | None:
    """Keep the run's notice and send it to the watch's targets; the notice (None: the
    watch asked not to be told of this run)."""
    watch = claim.watch
    if not should_tell(watch["notify_on"], changes):
        return None
    title, body = notice_text(watch["question"], changes, link)
    notice: NoticeRow = {
        "notice_id": claim.run_id,
        "owner": watch["owner"],
        "watch_id": watch["watch_id"],
        "due": claim.due,
        "run_id": claim.run_id,
        "title": title,
        "body": body,
        "created_at": time.time(),
        "read_at": None,
    }
    store.add_notice(notice)
    reached = store.delivered(watch["watch_id"], claim.due)
    for url in watch["targets"]:
        if _shown(url) in reached:
            continue

        def record(attempt: Attempt) -> None:
            store.record_delivery(
                {
                    "watch_id": watch["watch_id"],
                    "due": claim.due,
                    "target": attempt.target,
                    "attempt": attempt.attempt,
                    "ok": attempt.ok,
                    "error": attempt.error,
                    "at": attempt.at,
                }
            )

        deliver(url, title, body, backoff=backoff, on_attempt=record, sleep=sleep)
    return notice


def _shown(url: str) -> str:
    try:
        return redacted(url)
    except InvalidInput:  # an unusable target: deliver() records why
        return ""
