"""The research payload: everything about a run (CLI ``--json``, the API, the app)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypedDict

from local2.contracts.records import EventEntry
from local2.contracts.turn import Grade

RunStatus = Literal["done", "unfinished", "running", "failed"]


class ResearchStep(TypedDict):
    """One step of the plan, without the text it found (that is in the ledger)."""

    id: str
    description: str | None
    tool: str | None
    args: dict[str, Any] | None
    requires: list[str] | None
    round: int | None
    status: Annotated[str | None, Field(description="pending, started, done, failed, skipped.")]
    error: str | None
    duration_s: float
    calls: list[dict[str, Any]]
    sources: int


class ResearchPayload(TypedDict):
    """A research run: its plans, steps, rounds, sources and the verified report."""

    run_id: str | None
    question: str | None
    status: RunStatus
    goal: str
    plan: list[dict[str, Any]]
    steps: list[ResearchStep]
    rounds: list[dict[str, Any]]
    sources: Annotated[
        list[dict[str, Any]], Field(description="The references: numbered from the ledger.")
    ]
    ledger_size: int
    report: Annotated[str, Field(description="The report, Markdown, cited as [n].")]
    unsupported: Annotated[
        list[Any], Field(description="Sentences verification removed or marked unsupported.")
    ]
    removed_links: list[Any]
    citations: int
    replans: int
    model: str | None
    backend: str | None
    events: list[str]
    event_log: list[EventEntry]
    critique: Grade | None


class ResearchRun(TypedDict):
    """One research run in a list of runs (newest first)."""

    run_id: str
    question: str
    model: str | None
    created_at: float
    updated_at: float
    status: RunStatus
    steps_done: int
    steps: int
    sources: int
