"""What a watch's run found changed since its last run (shown first, sent in its notice)."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict


class SourceChange(TypedDict):
    """A source that is new in this run, or was read last time and is not now."""

    url: str
    title: str


class ClaimChange(TypedDict):
    """A claim of the report (its sentence, citation marks out) and the sources it cites."""

    claim: str
    sources: list[str]  # the URLs of the sources it cites


class ClaimRevised(TypedDict):
    """A claim stated again in other terms (a figure, a name changed): before and after."""

    before: ClaimChange
    after: ClaimChange


class ClaimWithdrawn(TypedDict):
    """A claim last run's report made that this run no longer supports, and why."""

    claim: str
    sources: list[str]
    reason: str


class WhatChanged(TypedDict):
    """This run against the watch's last finished run; ``nothing_new`` when all is empty."""

    first_run: Annotated[bool, Field(description="No earlier run: everything is new.")]
    nothing_new: bool
    new_sources: list[SourceChange]
    sources_gone: list[SourceChange]
    new_claims: list[ClaimChange]
    revised_claims: list[ClaimRevised]
    no_longer_supported: list[ClaimWithdrawn]
    looked_first_since: NotRequired[
        Annotated[
            str | None,
            Field(
                description="ISO date: this run's first round looked only at sources published "
                "on or after it (the day the last run started); null: it looked at any date."
            ),
        ]
    ]
    not_looked_at: NotRequired[
        Annotated[
            list[SourceChange],
            Field(
                description="Last run's sources this run did not search for (dated before "
                "looked_first_since or undated, and no later round looked): not gone."
            ),
        ]
    ]


class WatchView(TypedDict):
    """A watch as a person (the CLI, the API, the app) sees it: its Apprise targets redacted."""

    watch_id: str
    question: str
    schedule: str
    timezone: str
    notify_on: str
    targets: Annotated[list[str], Field(description="Apprise URLs, secrets masked (****).")]
    paused: bool
    next_due: Annotated[float | None, Field(description="Epoch seconds; null when paused.")]
    options: dict[str, Any]  # the run's options: max_rounds, sources, keep, scope
    created_at: float


class WatchRunView(TypedDict):
    """One due time of a watch: its research run (open it as any run), how it ended, and
    what it found changed (null until it finished)."""

    due: float
    run_id: str
    status: str  # running | done | failed
    attempts: int
    error: str | None
    started_at: float
    finished_at: float | None
    nothing_new: bool | None
    changes: WhatChanged | None


class DeliveryView(TypedDict):
    """One attempt to send a run's notice to one target (redacted)."""

    due: float
    target: str
    attempt: int
    ok: bool
    error: str | None
    at: float


class WatchDetail(TypedDict):
    """A watch with its latest runs and delivery attempts, newest first."""

    watch: WatchView
    runs: list[WatchRunView]
    deliveries: list[DeliveryView]


class NoticeView(TypedDict):
    """A run's notice in the person's list: unread until read."""

    notice_id: str
    watch_id: str
    run_id: str
    title: str
    body: str
    created_at: float
    unread: bool
