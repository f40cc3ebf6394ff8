"""The state of one research run (thread = run id), checkpointed after every step.

Steps are kept by id in ``steps`` (merged, so steps running side by side each write their
own record; a ``None`` value deletes a step a replan replaced). Only ``execute`` writes the
ledger, in step order, so source numbers do not depend on which step finished first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, NotRequired, TypedDict

from local2.contracts import (
    Clarification,
    ClarifyRequest,
    Critique,
    EventEntry,
    Followup,
    Keep,
    NoSources,
    PlanRecord,
    ResearchCall,
    ResearchSource,
    RoundRecord,
    Sources,
    SubQuestion,
    UnsupportedSentence,
)
from local2.graph import turn_list
from local2.research.ledger import Found, Source, Why


def merge_steps(
    current: dict[str, StepRecord] | None, update: dict[str, StepRecord | None] | None
) -> dict[str, StepRecord]:
    """Each step's latest record by id; None drops a step (a replanned one)."""
    merged = dict(current or {})
    for key, value in (update or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


CallRecord = ResearchCall  # one tool call of a step, as the payload shows it


class StepRecord(TypedDict, total=False):
    id: str
    description: str
    tool: str  # any tool that only reads (research/step_tools.py), or compose
    args: dict[str, Any]  # as the planner (a model) or the person wrote them (JSON)
    requires: list[str]
    round: int
    status: str  # pending | done | failed | skipped
    error: str | None
    calls: list[CallRecord]
    found: list[Found]
    duration_s: float
    branch: str | None  # the sub-question it serves (None: compose)
    followup: int  # the follow-up question it was planned for (0: the run itself)


class Target(TypedDict):
    """A source a read step reads, and why (the search that found it, rank and score)."""

    url: str
    title: str
    why: NotRequired[Why | None]


class ReadyStep(TypedDict):
    """A step ``execute`` hands to ``run_step``, with the sources it reads."""

    step: StepRecord
    targets: list[Target]


class StepRun(ReadyStep):
    """What ``run_step`` is sent: a ready step, and the run it belongs to."""

    run_id: str
    started_at: float | None
    question: str
    owner: str


class ResearchState(TypedDict):
    question: str
    run_id: NotRequired[str]
    owner: NotRequired[str]  # whose run this is: memory is recalled as theirs
    started_at: NotRequired[float]
    max_rounds: NotRequired[int]
    trust_urls: NotRequired[bool]  # tools.approval: never: fetch any URL a plan names
    round: NotRequired[int]
    goal: NotRequired[str]
    plans: NotRequired[Annotated[list[PlanRecord], turn_list]]  # each plan and its origin
    steps: NotRequired[Annotated[dict[str, StepRecord], merge_steps]]
    order: NotRequired[list[str]]  # step ids in plan order
    last_step: NotRequired[int]  # the highest step number given (ids are never reused)
    ready: NotRequired[list[ReadyStep]]  # what execute hands to run_step next
    decision: NotRequired[str]
    forbidden: NotRequired[list[str]]  # call keys (plan.call_key) that failed for good
    handled: NotRequired[list[str]]  # failed steps already replanned around
    replans: NotRequired[int]
    schema_failed: NotRequired[
        str | None
    ]  # the model whose plan or gaps failed (research/_plan.py: gave_up)
    filed: NotRequired[list[str]]  # steps whose sources are in the ledger
    ledger: NotRequired[list[Source]]
    gaps: NotRequired[list[str]]
    rule_hop: NotRequired[int | None]  # the round after which the rule named the second hop
    rounds: NotRequired[Annotated[list[RoundRecord], turn_list]]
    draft: NotRequired[str]
    report: NotRequired[str]
    body: NotRequired[str]
    unsupported: NotRequired[list[UnsupportedSentence]]
    sources: NotRequired[list[ResearchSource]]
    citations: NotRequired[int]
    removed_links: NotRequired[list[str]]
    no_sources: NotRequired[NoSources | None]  # why no usable source was gathered (no report)
    event_log: NotRequired[Annotated[list[EventEntry], turn_list]]
    critique: NotRequired[Critique | None]
    grade_owed: NotRequired[bool]  # the critic gave way to the person's next question
    model: NotRequired[str]
    backend: NotRequired[str]
    error: NotRequired[str | None]
    # The person steers (docs/architecture.md, "Research"): what was asked for at the start,
    # what the run asked them, what they said while it ran, and follow-ups on its report.
    clarify: NotRequired[str]  # auto: the planner may ask one question first | never
    review: NotRequired[bool]  # pause before the first search with the plan
    # a plan the person gave at the start: their PlanEdit as JSON, validated again to plan
    given_plan: NotRequired[dict[str, Any] | None]
    clarify_request: NotRequired[ClarifyRequest | None]  # what the planner wants to ask
    clarification: NotRequired[Clarification | None]
    reviewed: NotRequired[bool]
    review_error: NotRequired[str | None]  # why the plan last sent was refused
    subquestions: NotRequired[list[SubQuestion]]
    notes: NotRequired[list[str]]  # the person's free text, for the planner and the report
    steer_seen: NotRequired[int]  # the last say of the run's inbox applied
    stopped: NotRequired[str | None]  # why the run stopped early (the person said so)
    followup: NotRequired[str | None]  # the follow-up question being answered
    followups: NotRequired[Annotated[list[Followup], turn_list]]
    # Where the run looks and what it keeps (docs/library.md), so a resume, an answer to a
    # pause or a follow-up, in this process or another, looks and keeps as the run began.
    looks_in: NotRequired[Sources]  # web | library | both
    keep: NotRequired[Keep | None]  # the run's own library.keep (None: the setting)


class ResearchUpdate(TypedDict, total=False):
    """What a research node returns: any of :class:`ResearchState`'s fields, as its reducer
    takes them (a per-run list may be :data:`~local2.graph.RESET`, alone or first; a step
    None drops it)."""

    question: str
    run_id: str
    owner: str
    started_at: float
    max_rounds: int
    trust_urls: bool
    round: int
    goal: str
    plans: Sequence[PlanRecord | str] | str
    steps: Mapping[str, StepRecord | None]
    order: list[str]
    last_step: int
    ready: list[ReadyStep]
    decision: str
    forbidden: list[str]
    handled: list[str]
    replans: int
    schema_failed: str | None
    filed: list[str]
    ledger: list[Source]
    gaps: list[str]
    rule_hop: int | None
    rounds: Sequence[RoundRecord | str] | str
    draft: str
    report: str
    body: str
    unsupported: list[UnsupportedSentence]
    sources: list[ResearchSource]
    citations: int
    removed_links: list[str]
    no_sources: NoSources | None
    event_log: Sequence[EventEntry | str] | str
    critique: Critique | None
    grade_owed: bool
    model: str
    backend: str
    error: str | None
    clarify: str
    review: bool
    given_plan: dict[str, Any] | None  # the person's PlanEdit as JSON (see ResearchState)
    clarify_request: ClarifyRequest | None
    clarification: Clarification | None
    reviewed: bool
    review_error: str | None
    subquestions: list[SubQuestion]
    notes: list[str]
    steer_seen: int
    stopped: str | None
    followup: str | None
    followups: Sequence[Followup | str] | str
