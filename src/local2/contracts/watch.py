"""What a watch's run found changed since its last run (shown first, sent in its notice)."""

from __future__ import annotations

from typing import Annotated

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
