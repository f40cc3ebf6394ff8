"""The state schema: everything one turn of the graph reads and writes.

Two lifetimes live here. *Per-turn* fields (the working messages, thinking, tool calls,
memory hits, events, critique) are reset by ``receive`` at the start of each turn, so a
checkpoint never carries more than one turn of them. *Session* fields survive across turns
and stay small: the conversation itself lives in the append-only
:class:`~local2.storage._turn_log.TurnLog` and the state keeps only ``history_head``, the id
of the last turn visible from this checkpoint. Storage per turn is therefore O(new content),
and any past checkpoint still names exactly the history it saw, so it can be replayed or
forked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from langchain_core.messages import AnyMessage, BaseMessage
from langgraph.graph.message import add_messages

from local2.contracts import (
    Critique,
    DocumentHit,
    EventEntry,
    MemoryHit,
    Pairwise,
    PendingCall,
    PendingGrade,
    Respondent,
    Retry,
    Reward,
    SavedMemory,
    ToolCallRecord,
)

RESET = "__reset__"
RespondentId = Literal["a", "b"]
RESPONDENT_IDS: tuple[RespondentId, RespondentId] = ("a", "b")  # a compare turn's two respondents


def turn_list(current: list[Any] | None, update: list[Any] | str) -> list[Any]:
    """Append to a per-turn list; :data:`RESET` (alone or first in the update) empties it."""
    if update == RESET:
        return []
    if update and update[0] == RESET:
        return list(update[1:])
    return [*(current or []), *update]


def merge_dict(current: dict[str, Reward] | None, update: dict[str, Reward]) -> dict[str, Reward]:
    """The rewards so far, with the update's (by query id)."""
    return {**(current or {}), **update}


def merge_pending(
    current: dict[str, PendingGrade] | None, update: dict[str, PendingGrade | None]
) -> dict[str, PendingGrade]:
    """Add grades waiting to be given; a ``None`` value says one was given (it goes)."""
    merged = dict(current or {})
    for query_id, pending in update.items():
        if pending is None:
            merged.pop(query_id, None)
        else:
            merged[query_id] = pending
    return merged


def merge_respondents(
    current: dict[str, Respondent] | None, update: dict[str, Respondent] | str
) -> dict[str, Respondent]:
    """Merge each respondent's fields (parallel branches write their own); RESET empties."""
    if isinstance(update, str):  # RESET
        return {}
    merged = dict(current or {})
    for rid, fields in update.items():
        merged[rid] = Respondent(**{**merged.get(rid, {}), **fields})
    return merged


def cleared_compare(state: Mapping[str, Any]) -> TurnUpdate:
    """Updates that empty an earlier turn's compare and retry records (none when there are
    none, so sessions that never compare keep the checkpoints they always had)."""
    update: TurnUpdate = {}
    if state.get("respondents"):
        update["respondents"] = RESET
    if state.get("pairwise"):
        update["pairwise"] = None
    if state.get("retry"):
        update["retry"] = None
    return update


class TurnState(TypedDict):
    # Input of a turn.
    query: str
    session_id: NotRequired[str | None]
    # Whose session this is (local2.contracts._people): memory is recalled and kept as theirs.
    owner: NotRequired[str]
    # Per turn: reset by `receive`.
    query_id: NotRequired[str]
    started_at: NotRequired[float]
    messages: NotRequired[Annotated[list[AnyMessage], add_messages]]
    thinking: NotRequired[Annotated[list[str], turn_list]]
    answer: NotRequired[str]
    pending_tool_calls: NotRequired[list[PendingCall]]
    tool_calls: NotRequired[Annotated[list[ToolCallRecord], turn_list]]
    tool_rounds: NotRequired[int]
    repairs: NotRequired[int]
    tools_stopped: NotRequired[bool]  # a repeated call ended the tool loop: answer now
    decision: NotRequired[str]  # set by generate: dispatch_tool | generate | publish
    memory_hits: NotRequired[Annotated[list[MemoryHit], turn_list]]
    memory_saved: NotRequired[list[SavedMemory]]
    document_hits: NotRequired[Annotated[list[DocumentHit], turn_list]]
    event_log: NotRequired[Annotated[list[EventEntry], turn_list]]
    model: NotRequired[str]
    backend: NotRequired[str]
    critique: NotRequired[Critique | None]
    error: NotRequired[str | None]
    # Session: survives across turns, stays small.
    history_head: NotRequired[str | None]
    turn_count: NotRequired[int]
    rewards: NotRequired[Annotated[dict[str, Reward], merge_dict]]
    # Grades that gave way to the next question, by query_id, until given (a handful at most).
    pending_grades: NotRequired[Annotated[dict[str, PendingGrade], merge_pending]]
    # Compare and retry turns (docs/architecture.md, "A turn's path"): per turn, emptied by
    # `receive` when a later turn starts; each record names its query_id too.
    respondents: NotRequired[Annotated[dict[str, Respondent], merge_respondents]]
    pairwise: NotRequired[Pairwise | None]
    retry: NotRequired[Retry | None]


class TurnUpdate(TypedDict, total=False):
    """What a node returns: any of :class:`TurnState`'s fields, as its reducer takes them (a
    per-turn list may be :data:`RESET`, alone or first)."""

    query: str
    session_id: str | None
    owner: str
    query_id: str
    started_at: float
    messages: Sequence[BaseMessage]
    thinking: Sequence[str] | str
    answer: str
    pending_tool_calls: list[PendingCall]
    tool_calls: Sequence[ToolCallRecord | str] | str
    tool_rounds: int
    repairs: int
    tools_stopped: bool
    decision: str
    memory_hits: Sequence[MemoryHit | str] | str
    memory_saved: list[SavedMemory]
    document_hits: Sequence[DocumentHit | str] | str
    event_log: Sequence[EventEntry | str] | str
    model: str
    backend: str
    critique: Critique | None
    error: str | None
    history_head: str | None
    turn_count: int
    rewards: dict[str, Reward]
    pending_grades: dict[str, PendingGrade | None]
    respondents: dict[str, Respondent] | str
    pairwise: Pairwise | None
    retry: Retry | None
