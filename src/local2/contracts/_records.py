"""The records a turn keeps in its state, and the parts pass between them.

What one tool call did, one memory recalled, one event logged, one grade given: the turn's
state holds lists of these (:mod:`local2.graph._turn`), the turn payload shows them
(:mod:`local2.contracts._turn`), and memory, the critic and the tools read and write them.
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict

from local2.contracts._sources import SourceMeta


class PendingCall(TypedDict):
    """A tool call the model asked for (natively, written as text, or the keyword router
    for it), not run yet; ``denied``: who refused it."""

    name: str
    args: dict[str, Any]  # the call's arguments as the model wrote them (JSON)
    id: str
    denied: NotRequired[str]


class ToolCallRecord(TypedDict):
    id: str
    tool: str
    args: dict[str, Any]  # the call's arguments as the model wrote them (JSON)
    result: str
    error: str | None
    duration_s: float
    provider: NotRequired[str]  # the service that answered, e.g. the search provider
    fix: NotRequired[str]  # what to do about the error, when the tool knows
    # A search of several sources (chat's sources picker): each hit's record, by its URL,
    # and what the search said of a source left out (docs/chat.md, "Where web search looks").
    sources: NotRequired[dict[str, SourceMeta]]
    notices: NotRequired[list[str]]


class MemoryHit(TypedDict):
    id: str
    content: str
    similarity: float
    age_s: float
    reward: float | None
    critic_score: int | None
    kind: str


class SavedMemory(TypedDict):
    """A fact the person asked to be remembered this turn ("Remember that ...")."""

    id: str
    content: str
    superseded: list[str]
    error: str | None


class EventEntry(TypedDict, total=False):
    """One event of a turn or a run: its subject and when (seconds from its start), with the
    event's own fields beside them (as its subject has them, :mod:`local2.events`)."""

    subject: str
    t: float
    respondent_id: str | None  # a compare turn's: a, b, or null for the turn's own events


class Critique(TypedDict, total=False):
    score: int | None
    feedback: str
    flags: list[str]


class PendingGrade(TypedDict):
    """An answered turn's grade that gave way to the session's next question, graded later
    from its turn's checkpoint (docs/architecture.md, "A turn's path")."""

    checkpoint_id: str | None  # where its critique started: the state just after its answer
    turn_id: str | None  # its turn in the turn log (the answer shown), where grades are noted
    pair: bool  # two respondents: the judge grades both and compares them


class Reward(TypedDict, total=False):
    rating: int
    comment: str | None
    at: float


class Respondent(TypedDict, total=False):
    """One respondent's answer in a compare turn: its own thinking, tools, memory."""

    respondent_id: str  # "a" | "b"
    model: str
    backend: str
    temperature: float | None
    answer: str
    thinking: list[str]
    tool_calls: list[ToolCallRecord]
    memory_hits: list[MemoryHit]
    critique: Critique | None
    turn_id: str | None  # its row in the turn log, once it continues the history
    engram_id: str | None
    error: str | None


class RespondentSpec(TypedDict):
    """One respondent of a compare turn as it is recorded: its model, temperature and arena
    label (``spec``: what the turn asked for, the second respondent's only)."""

    model: str
    temperature: float | None
    label: str
    spec: NotRequired[CompareSpec]


class CompareSpec(TypedDict):
    """The second respondent of a compare turn: another model, temperature, or both (None:
    the agent's own)."""

    model: str | None
    temperature: float | None


class Verdict(TypedDict):
    """The judge's pairwise verdict: the winner of both orders, each answer's grade, each
    order's choice and feedback (``reason`` when there is no winner)."""

    winner: str | None  # "a" | "b" | "tie"; None when it gave no verdict
    scores: dict[str, int | None]  # by respondent id
    verdicts: dict[str, str | None]  # by order (a_first, b_first): the respondent it chose
    feedback: dict[str, str]  # by order
    reason: NotRequired[str]


class Pairwise(TypedDict, total=False):
    """What a compare turn decided: the judge's verdict, the person's, the answer shown."""

    query_id: str
    parent_head: str | None  # the history both respondents answered from
    winner: str | None  # the judge's: "a" | "b" | "tie"; None when it gave no verdict
    judge: Verdict
    preferred: str | None  # the person's: "a" | "b" | "tie"
    shown: str  # the respondent whose answer continues the history
    specs: dict[str, RespondentSpec]  # by respondent id


class Retry(TypedDict, total=False):
    """A second attempt at a low-graded answer, with the critique as context."""

    query_id: str  # this attempt
    of: str  # the first attempt's query_id
    first: RetriedAttempt
    second: RetryAttempt  # once graded
    shown: int  # 1 or 2: the attempt the history continues from


class RetryAttempt(TypedDict):
    """An attempt of a retry: its turn in the turn log and its grade."""

    turn_id: str | None
    score: int | None


class RetriedAttempt(RetryAttempt):
    """The first attempt of a retry: its answer and the critique it is retried with."""

    answer: str
    feedback: str
    model: str | None
