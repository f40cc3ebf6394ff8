"""A session's finished turns as the chat shows them, rebuilt from what the turn log kept.

A resumed session (or another branch of one) is shown as it was when it streamed: each
turn's thinking, its tool calls with arguments, results and durations, the answer, the
critic's grade and the person's rating. Only how long the thinking took is not kept.
Ratings appear as one small message at the end of their turn, replaced when re-rated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from gradio import ChatMessage

import local2.ui._render as render
from local2.contracts import TurnPayload
from local2.ui._safe_markdown import neutralise

RATING_WORDS = {1: "wrong", 2: "poor", 3: "okay", 4: "good", 5: "excellent"}
RATED = "Your rating"


def rating_text(rating: int) -> str:
    return f"{rating}/5 ({RATING_WORDS.get(rating, '?')})"


def rating_message(rating: int) -> ChatMessage:
    return ChatMessage(
        role="assistant",
        content="",
        metadata={"title": f"{RATED}: {rating_text(rating)}", "status": "done"},
    )


def turn_view(turn: Mapping[str, Any]) -> render.TurnView:
    """A finished turn (a row of ``agent.sessions.history(..., detail=True)``) as a TurnView."""
    record = turn.get("record") or {}
    view = render.TurnView(str(turn.get("user") or ""))
    if record.get("thinking"):
        view.steps.append(render.ThinkingStep(0.0, str(record["thinking"]), 0.0, timed=False))
    calls = record.get("tool_calls") or []
    if calls:
        view.steps.append(
            render.ToolRound(
                [
                    render.ToolCall(
                        call_id=f"{turn.get('query_id')}-{i}",
                        tool=str(call.get("tool") or "?"),
                        args=call.get("args") or {},
                        started=0.0,
                        result=call.get("result"),
                        error=call.get("error"),
                        duration=float(call.get("duration_s") or 0.0),
                    )
                    for i, call in enumerate(calls)
                ]
            )
        )
    view.answer = str(turn.get("assistant") or "")
    view.answer_final = view.finished = True
    view.critique = turn.get("critique")
    view.events = list(record.get("event_log") or [])
    # a logged turn's record is its payload without the query and the answer
    view.payload = cast(TurnPayload, {**record, "query": view.query, "answer": view.answer})
    return view


def rating_of(turn: Mapping[str, Any]) -> int | None:
    rated = turn.get("rating") or turn.get("reward")
    return int(rated["rating"]) if isinstance(rated, dict) and rated.get("rating") else None


def history_messages(
    turns: Sequence[Mapping[str, Any]],
) -> tuple[list[ChatMessage], dict[int, str]]:
    """The chat of finished turns, and the index of each turn's question -> its query id."""
    chat: list[ChatMessage] = []
    ids: dict[int, str] = {}
    for turn in turns:
        ids[len(chat)] = str(turn.get("query_id") or "")
        chat.append(ChatMessage(role="user", content=neutralise(str(turn.get("user") or ""))))
        chat.extend(turn_view(turn).messages())
        rating = rating_of(turn)
        if rating is not None:
            chat.append(rating_message(rating))
    return chat, ids


def _title(message: Any) -> str:
    meta = message.get("metadata") if isinstance(message, dict) else message.metadata
    return str((meta or {}).get("title") or "")


def with_rating(
    chat: list[Any], ids: dict[int, str], query_id: str, rating: int
) -> tuple[list[Any], dict[int, str]]:
    """``chat`` with one turn's rating shown at its end (replacing an earlier one), and the
    turn starts moved to match."""
    starts = sorted(i for i, q in ids.items() if q == query_id)
    if not starts:
        return chat, ids
    start = starts[-1]
    end = min((i for i in ids if i > start), default=len(chat))
    turn = [m for m in chat[start:end] if not _title(m).startswith(RATED)]
    shift = len(turn) + 1 - (end - start)
    moved = {(i + shift if i > start else i): q for i, q in ids.items()}
    return [*chat[:start], *turn, rating_message(rating), *chat[end:]], moved


def turn_at(ids: dict[int, str], index: int) -> str | None:
    """The query id of the turn a chat message (by index) belongs to (None: not a turn that
    was recorded, e.g. one that was stopped)."""
    starts = [i for i in sorted(ids) if i <= index]
    return (ids[starts[-1]] or None) if starts else None
