"""The research payload: everything about a run (CLI ``--json``, the API, the app)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from local2.contracts._records import EventEntry
from local2.contracts._sources import RunScope, SourceMeta
from local2.contracts._turn import Grade

# stopped: finished early because the person stopped it (its report is from what was read)
# no_sources: finished with no usable source, so no report was written (see NoSources)
RunStatus = Literal[
    "done", "stopped", "no_sources", "unfinished", "running", "failed", "awaiting_input"
]


class ResearchCall(TypedDict):
    """One tool call a step made: its arguments, how it ended, how long it took and how
    many tries it needed, and how much text it brought."""

    tool: str
    args: dict[str, Any]  # the call's arguments as the planner (a model) or the person wrote them
    error: str | None
    duration_s: float
    attempts: int
    chars: int
    # a failed search's cause (tools/_search_failures.py: no_network, refused, timeout,
    # rejected_key...) and its fix, as the tool named them
    cause: NotRequired[str]
    fix: NotRequired[str]
    # every provider it tried failed for a cause no other query can cure (no network, a
    # refused connection or key): the run searches that way no more
    lasting: NotRequired[bool]


class PlannedStep(TypedDict):
    """A step as a plan lists it (its record in ``plan`` and the ``research.plan`` event)."""

    id: str | None
    tool: str | None
    args: dict[str, Any] | None  # as the planner (a model) or the person wrote them
    description: str | None
    requires: list[str] | None
    branch: str | None


class ShownStep(PlannedStep):
    """A step of a paused run's plan, as the person reviews it."""

    status: str | None


class PlanAttempt(TypedDict):
    """One reply the planner (or the reflection) was asked for: accepted or not, and why."""

    accepted: bool
    schema_valid: bool
    schema_errors: list[str]
    errors: list[str]
    chars: int


class PlanRecord(TypedDict):
    """One plan the run adopted (or the question it asked first): its round, where it came
    from (model, repaired, fallback, person, clarify, ...), why, its goal and steps, and the
    replies it took."""

    round: int
    origin: str
    reason: str
    goal: str
    steps: list[PlannedStep]
    attempts: list[PlanAttempt]
    model_skipped: NotRequired[str]  # why the model was not asked (research/_plan.py)
    why: NotRequired[str]  # why a rule's plan (fallback, no-tools) was used, for the person
    why_detail: NotRequired[str]  # what was wrong with the model's plan, the planner's words


class RoundRecord(TypedDict):
    """One reflection on the sources read: the gaps it named for the next round, or why the
    run stops there."""

    n: int
    gaps: list[str]
    origin: str
    stop: str | None
    model_skipped: str | None


class ClarifyRequest(TypedDict):
    """The one question the planner asks before it plans, and its readings of the question."""

    question: str
    readings: list[str]


class NoSources(TypedDict):
    """Why a run ended with no usable source, what it tried, and the one next step that fits
    (no model was asked to write from nothing)."""

    cause: Annotated[
        str,
        Field(
            description="no_network, empty_library, library_nothing, refused, timeout, "
            "nothing_found, no_tools, dropped or failed."
        ),
    ]
    tried: Annotated[list[str], Field(description="Each search or read tried, and how it ended.")]
    next_step: Annotated[str, Field(description="What to do next, for this cause.")]


class UnsupportedSentence(TypedDict):
    """A sentence of a report that verification removed or marked, and why."""

    sentence: str
    reason: str
    citations: list[int]


class ResearchStep(TypedDict):
    """One step of the plan, without the text it found (that is in the ledger)."""

    id: str
    description: str | None
    tool: str | None
    args: dict[str, Any] | None  # as the planner (a model) or the person wrote them
    requires: list[str] | None
    round: int | None
    status: Annotated[str | None, Field(description="pending, started, done, failed, skipped.")]
    error: str | None
    duration_s: float
    calls: list[ResearchCall]
    sources: int
    branch: Annotated[
        str | None,
        Field(description="The id of the sub-question it serves (named so since runs began)."),
    ]
    followup: Annotated[int | None, Field(description="The follow-up it was planned for.")]


class ResearchSource(TypedDict):
    """One source of the evidence ledger, numbered as the report cites it, and why it was
    read: the search step that found it, its rank there and the reranker's score."""

    n: int
    title: str
    url: str
    kind: Annotated[str, Field(description="page (read) or result (a search hit, unread).")]
    read_at: float | None
    page: Annotated[int | None, Field(description="The page of a document it is.")]
    found_by: Annotated[str, Field(description="The step that found it (or read it).")]
    query: Annotated[str | None, Field(description="The query of the search that found it.")]
    rank: Annotated[int | None, Field(description="Its place in that search's hits, from 1.")]
    score: Annotated[
        float | None, Field(description="The reranker's score for that query, 0 to 1.")
    ]
    kept_id: NotRequired[
        Annotated[str, Field(description="Read from this kept copy in your library (lib-...).")]
    ]
    kept_url: NotRequired[
        Annotated[str, Field(description="The kept copy over the API: /library/{id}.")]
    ]
    meta: NotRequired[
        Annotated[
            SourceMeta,
            Field(description="Its bibliographic record: date (null: undated), authors, DOI."),
        ]
    ]


class SubQuestion(TypedDict):
    """One sub-question of the run (the steps that look into it)."""

    id: str
    text: str
    status: Annotated[str, Field(description="open, dropped (its sources left out), stopped.")]
    round: int
    origin: Annotated[str, Field(description="model, repaired, fallback, hop, person or followup.")]


class SubQuestionView(SubQuestion):
    steps: list[str]


class Clarification(TypedDict):
    """The question a run asked before planning, its readings and the person's answer."""

    question: str
    readings: list[str]
    answer: str


class ResearchRequest(TypedDict):
    """What a paused run waits for (the LangGraph interrupt's value): its ``plan``, shown as
    sub-questions and steps, or an ``answer`` to ``clarify``."""

    kind: Literal["research_input"]
    waits_for: Annotated[str, Field(description="plan or answer.")]
    run_id: str
    question: str
    goal: str
    subquestions: list[SubQuestionView]
    steps: list[ShownStep]
    clarify: ClarifyRequest | None
    error: Annotated[str | None, Field(description="Why the last plan sent was refused.")]
    resume: str


class PendingInput(ResearchRequest):
    """A request as a paused run's checkpoint holds it, with the interrupt it answers."""

    interrupt_id: str


class Followup(TypedDict):
    """A follow-up question on the report, answered from the ledger first."""

    n: int
    question: str
    answer: Annotated[str, Field(description="Markdown, cited as [n] from the run's ledger.")]
    from_ledger: Annotated[bool, Field(description="Answered with no new search.")]
    searched: list[str]
    read: list[str]
    sources: list[ResearchSource]
    unsupported: list[UnsupportedSentence]
    citations: int


class SteerRecord(TypedDict):
    """A say put in a running run's inbox; the run applies it at its next step boundary."""

    run_id: str
    seq: int
    kind: str
    value: str
    at: float


class ResearchPayload(TypedDict):
    """A research run: its plans, steps, rounds, sources and the verified report."""

    run_id: str | None
    question: str | None
    status: RunStatus
    stopped: Annotated[
        str | None, Field(description="Why the run ended early (the person stopped it), or null.")
    ]
    no_sources: Annotated[
        NoSources | None,
        Field(description="Why no source was gathered and what to do (status no_sources)."),
    ]
    goal: str
    plan: list[PlanRecord]
    steps: list[ResearchStep]
    rounds: list[RoundRecord]
    sources: Annotated[
        list[ResearchSource], Field(description="The references: numbered from the ledger.")
    ]
    ledger_size: int
    report: Annotated[str, Field(description="The report, Markdown, cited as [n].")]
    unsupported: Annotated[
        list[UnsupportedSentence],
        Field(description="Sentences verification removed or marked unsupported."),
    ]
    removed_links: list[str]
    citations: int
    replans: int
    model: str | None
    backend: str | None
    events: list[str]
    event_log: list[EventEntry]
    critique: Grade | None
    subquestions: list[SubQuestion]
    clarification: Clarification | None
    notes: Annotated[list[str], Field(description="What the person said during the run.")]
    followups: list[Followup]
    awaiting: Annotated[ResearchRequest | None, Field(description="What a paused run waits for.")]
    looks_at: NotRequired[
        Annotated[list[str], Field(description="The sources it searched: web, arxiv, ...")]
    ]
    scope: NotRequired[
        Annotated[RunScope | None, Field(description="Its scope in time and place, or null.")]
    ]


class RunSourcing(TypedDict):
    """Where a run looks (its ``sources``) and what it keeps of what it reads, in words."""

    sources: str  # web | library | both
    keep: str
    note: str


class RunItem(TypedDict):
    """A run's first stream item: its id and question, and whether it goes on from before
    (``library``: where a new run looks and what it keeps)."""

    run_id: str
    question: str
    resumed: bool
    library: NotRequired[RunSourcing]


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
    owner: str  # whose run it is
