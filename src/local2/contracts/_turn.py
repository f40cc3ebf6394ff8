"""The turn payload (``response.generation``) and what the session endpoints return.

TypedDicts, not classes: the graph builds the payload as a plain dict on every turn (no
validation on the path to the answer), and the HTTP API names these types as its response
models, so ``/openapi.json`` documents every field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from local2.contracts._documents import DocumentHit
from local2.contracts._records import CompareSpec, EventEntry, MemoryHit, Reward, SavedMemory
from local2.contracts._sources import SourceMeta
from local2.contracts.approval import WaitingCall


class ToolCall(TypedDict):
    """One tool call of the turn, as the person sees it."""

    tool: str
    args: dict[str, Any]  # the call's arguments as the model wrote them (JSON)
    result: str | None
    error: Annotated[str | None, Field(description="Why the call failed; null when it did not.")]
    duration_s: float | None
    provider: NotRequired[str]  # the service that answered, e.g. the search provider
    fix: NotRequired[str]  # what to do about the error, when the tool knows
    sources: NotRequired[dict[str, SourceMeta]]  # a search of several sources: each hit's record
    notices: NotRequired[list[str]]  # a source such a search left out, and why


class Grade(TypedDict, total=False):
    """The critic's grade of an answer (1-5, or null when it could not grade)."""

    score: int | None
    feedback: str
    flags: list[str]  # grounding problems found beside the grade


class RespondentAnswer(TypedDict, total=False):
    """One of two respondents' answers in a compare turn."""

    respondent_id: Literal["a", "b"]
    label: str | None
    model: str | None
    backend: str | None
    temperature: float | None
    answer: str | None
    thinking: str
    tool_calls: list[ToolCall]
    memory_hits: list[MemoryHit] | None  # null: it failed before recalling any
    critique: Grade | None
    error: str | None
    continues_history: bool


class PairwiseVerdict(TypedDict, total=False):
    """What a compare turn decided: the judge's verdict (both orders), the person's."""

    winner: Literal["a", "b", "tie"] | None
    scores: dict[str, int | None] | None  # each respondent's grade
    verdicts: dict[str, str | None] | None  # each order's choice (a_first, b_first)
    feedback: dict[str, str] | None  # each order's feedback
    reason: str | None
    preferred: Literal["a", "b", "tie"] | None
    shown: Literal["a", "b"]
    models: dict[str, str | None]


class RetryAttempts(TypedDict, total=False):
    """A second attempt at a low-graded answer: both attempts' grades and which is shown."""

    of: str | None
    first: RetriedAnswer
    second: RetryScore
    shown: int


class RetriedAnswer(TypedDict):
    """The first attempt of a retry: its answer, its grade and the model that gave it."""

    answer: str | None
    score: int | None
    feedback: str | None
    model: str | None


class RetryScore(TypedDict):
    """The second attempt's grade (null until it is graded)."""

    score: int | None


class ApprovalWait(TypedDict):
    """The tool calls a paused turn waits on, and where to answer."""

    calls: list[WaitingCall]
    resume: str | None


class OriginalTurn(TypedDict):
    """The turn the original branch answered from a replayed checkpoint."""

    query_id: str
    query: str
    answer: str
    model: str | None
    backend: str | None


class TurnPayload(TypedDict):
    """Everything about one turn: the answer, the thinking, each tool call, each memory
    recalled, the model, the event log and (once it has run) the critic's grade."""

    session_id: str | None
    query_id: str | None
    query: str | None
    answer: Annotated[str, Field(description="The answer the session continues from.")]
    thinking: Annotated[str, Field(description="The model's thinking; never sent back to it.")]
    tool_calls: list[ToolCall]
    memory_hits: Annotated[
        list[MemoryHit], Field(description="Memories recalled for this turn, as data.")
    ]
    memory_saved: list[SavedMemory]
    document_hits: Annotated[
        list[DocumentHit],
        Field(description="Passages of the session's attached documents given for this turn."),
    ]
    model: str | None
    backend: str | None
    events: Annotated[list[str], Field(description="The subjects of event_log, in order.")]
    event_log: list[EventEntry]
    critique: NotRequired[
        Annotated[
            Grade | None,
            Field(description="The critic's grade; null while it is pending or when it is off."),
        ]
    ]
    critique_pending: NotRequired[
        Annotated[bool, Field(description="True when the grade will come after this payload.")]
    ]
    status: NotRequired[
        Annotated[
            Literal["done", "awaiting_approval"],
            Field(description="awaiting_approval: a tool call waits for the person."),
        ]
    ]
    approval: NotRequired[ApprovalWait]
    error: NotRequired[str]
    # A compare turn (two respondents), and a retry of a low-graded answer.
    respondents: NotRequired[dict[str, RespondentAnswer]]
    pairwise: NotRequired[PairwiseVerdict]
    retry: NotRequired[RetryAttempts]
    retry_offered: NotRequired[bool]
    # A replay: the new branch and what the original branch answered.
    branch: NotRequired[list[str]]
    replayed_from: NotRequired[str]
    original: NotRequired[OriginalTurn | None]


class TurnRecord(TypedDict, total=False):
    """A turn as the turn log keeps it beside its question and answer (columns of their
    own): the payload's other fields, and in a compare turn whose answer it is."""

    session_id: str | None
    query_id: str | None
    thinking: str
    tool_calls: list[ToolCall]
    memory_hits: list[MemoryHit]
    memory_saved: list[SavedMemory]
    document_hits: list[DocumentHit]
    model: str | None
    backend: str | None
    events: list[str]
    event_log: list[EventEntry]
    critique: Grade | None
    critique_pending: bool
    status: Literal["done", "awaiting_approval"]
    approval: ApprovalWait
    error: str
    respondents: dict[str, RespondentAnswer]
    pairwise: PairwiseVerdict
    retry: RetryAttempts
    retry_offered: bool
    branch: list[str]
    replayed_from: str
    original: OriginalTurn | None
    respondent_id: str  # the compare respondent whose answer this turn keeps


class FeedbackResult(TypedDict, total=False):
    """What a rating or a preference recorded."""

    session_id: str
    query_id: str
    rating: int
    preferred: Literal["a", "b", "tie"]
    unchanged: bool  # the same rating again: nothing new was recorded
    previous: int | None  # the rating this one replaces
    continues: Literal["a", "b"] | None
    continues_history: bool
    note: str
    engrams_annotated: Annotated[
        int | None, Field(description="null: memory gets it when it next opens.")
    ]
    events: list[EventEntry]
    preference: FeedbackResult  # a preference given with a rating, what it recorded


class AttemptShown(TypedDict):
    """Which attempt of a retried turn the session now continues from."""

    session_id: str
    query_id: str
    shown: int  # 1 or 2
    events: list[EventEntry]


class HistoryTurn(TypedDict):
    """One clean turn of a session's history (thinking never among it)."""

    query_id: str
    user: str
    assistant: str
    created_at: float
    reward: Reward | None
    record: NotRequired[TurnRecord]
    critique: NotRequired[Grade | None]
    rating: NotRequired[Reward | None]


class CheckpointRow(TypedDict):
    """One checkpoint of a session, as time travel lists it (newest first)."""

    checkpoint_id: str | None
    parent_id: str | None
    step: int | None
    source: str | None
    node: str
    created_at: str | None
    next: list[str]
    query_id: str | None
    current: Annotated[bool, Field(description="On the branch the session continues from.")]
    settled: bool
    summary: str
    abandoned: Annotated[bool, Field(description="Left by a turn that never finished.")]


class CheckpointTurn(TypedDict):
    """One turn of a session as time travel offers it: a question, and the checkpoints that
    answered it (oldest turn first)."""

    turn_id: Annotated[str, Field(description="The checkpoint the turn started at.")]
    number: Annotated[int, Field(description="Its place in the conversation: 1 is the first.")]
    question: str
    answer: Annotated[str | None, Field(description="null: not answered on this branch.")]
    status: Literal["answered", "awaiting_approval", "unfinished"]
    query_id: str | None
    rerun_of: Annotated[
        str | None,
        Field(description="The turn this one asks again (a fork or a replay), if any."),
    ]
    replay: Annotated[bool, Field(description="A replay: the same question run again.")]
    current: Annotated[bool, Field(description="On the branch the session continues from.")]
    abandoned: Annotated[bool, Field(description="Stopped or failed before it settled.")]
    fork_from: Annotated[
        str, Field(description="Where a fork of this question starts: just before the turn.")
    ]
    replay_from: Annotated[
        str | None,
        Field(description="Where a replay of this turn resumes: once its question was received."),
    ]
    created_at: str | None
    checkpoints: list[str]  # its checkpoints' ids, newest first


class SessionHistory(TypedDict):
    """``GET /sessions/{id}/history``: the session's turns and checkpoints."""

    session_id: str
    turns: list[HistoryTurn]
    checkpoints: list[CheckpointRow]


class SessionSummary(TypedDict):
    """One session in a list of sessions (newest first)."""

    session_id: str
    turns: int
    started_at: float
    updated_at: float
    first: Annotated[str, Field(description="The session's first question.")]


class AuditRun(TypedDict):
    """One logged turn in a list of them (``local2 runs``), newest first."""

    session_id: str | None
    query_id: str | None
    written_at: str | None
    model: str | None
    query: str
    tools: list[str | None]
    score: int | None
    path: str


# -- what a turn asks for (built by the service: ``agent.turns.options``) -------------------


class FirstAttempt(TypedDict):
    """The answer a retry tries again: its turn, where it hung, and the critic's grade."""

    query_id: str
    turn_id: str
    parent_id: str | None
    answer: str
    score: int | None
    feedback: str
    model: str | None


@dataclass(frozen=True)
class TurnOptions:
    """What one turn asks for besides its question: a second respondent (``compare``), a
    second attempt (``retry``), or where its ``web_search`` looks (``sources``, names as
    research takes them: ``web``, ``library``, ``arxiv``...; empty: ``web.search.sources``).
    Surfaces get it from the service, never build it."""

    compare: CompareSpec | None = None
    retry: FirstAttempt | None = None
    sources: tuple[str, ...] = ()


NO_OPTIONS = TurnOptions()


@dataclass(frozen=True)
class AgentInfo:
    """What a surface shows about the agent: its model, and which parts are on."""

    model: str
    backend: str
    native_tools: bool  # False: tools are offered in the prompt, calls parsed from text
    tools: tuple[str, ...]
    memory: bool
    critic: bool
