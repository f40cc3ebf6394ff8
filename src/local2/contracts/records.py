"""The records a turn keeps in its state, and the parts pass between them.

What one tool call did, one memory recalled, one event logged, one grade given: the turn's
state holds lists of these (:mod:`local2.graph.state`), the turn payload shows them
(:mod:`local2.contracts.turn`), and memory, the critic and the tools read and write them.
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict


class ToolCallRecord(TypedDict):
    id: str
    tool: str
    args: dict[str, Any]
    result: str
    error: str | None
    duration_s: float
    provider: NotRequired[str]  # the service that answered, e.g. the search provider
    fix: NotRequired[str]  # what to do about the error, when the tool knows


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
    subject: str
    t: float


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


class Pairwise(TypedDict, total=False):
    """What a compare turn decided: the judge's verdict, the person's, the answer shown."""

    query_id: str
    parent_head: str | None  # the history both respondents answered from
    winner: str | None  # the judge's: "a" | "b" | "tie"; None when it gave no verdict
    judge: dict[str, Any]  # scores, both orders' verdicts and feedback
    preferred: str | None  # the person's: "a" | "b" | "tie"
    shown: str  # the respondent whose answer continues the history
    specs: dict[str, dict[str, Any]]  # each respondent's model, temperature and label


class Retry(TypedDict, total=False):
    """A second attempt at a low-graded answer, with the critique as context."""

    query_id: str  # this attempt
    of: str  # the first attempt's query_id
    first: dict[str, Any]  # turn_id, answer, score, feedback of the first attempt
    second: dict[str, Any]  # turn_id and score of the second, once graded
    shown: int  # 1 or 2: the attempt the history continues from
