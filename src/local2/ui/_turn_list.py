"""How time travel shows a session's turns: a row and a picker label per turn, and the
"Original branch" pane (the picked turn's own question and answer)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from local2.ui._render import short
from local2.ui._safe_markdown import neutralise

TURN_COLUMNS = ["turn", "question", "answer", "branch"]
NO_ANSWER = {
    "awaiting_approval": "(waiting for your approval of a tool call)",
    "unfinished": "(no answer yet)",
}


def title(turn: Mapping[str, Any]) -> str:
    """``Turn 2``, and whether it asks an earlier turn again: ``Turn 2 (fork)``."""
    kind = " (replay)" if turn.get("replay") else " (fork)" if turn.get("rerun_of") else ""
    return f"Turn {turn['number']}{kind}"


def branch(turn: Mapping[str, Any], new: bool = False) -> str:
    """Where the turn is: on the branch the session continues from, another, or stopped."""
    label = "stopped" if turn.get("abandoned") else "current" if turn.get("current") else "other"
    return f"{label} · new" if new else label


def question(turn: Mapping[str, Any]) -> str:
    return str(turn.get("question") or "") or "(question not recorded)"


def answer(turn: Mapping[str, Any]) -> str:
    if turn.get("answer") is not None:
        return str(turn["answer"])
    if turn.get("abandoned"):
        return "(stopped before it answered)"
    return NO_ANSWER.get(str(turn.get("status")), "(no answer yet)")


def rows(
    turns: Sequence[Mapping[str, Any]], new_ids: frozenset[str] = frozenset()
) -> list[list[str]]:
    """The turns table: each turn's question, its own answer and its branch."""
    return [
        [
            title(t),
            short(question(t), 120),
            short(answer(t), 160),
            branch(t, t["turn_id"] in new_ids),
        ]
        for t in turns
    ]


def choices(turns: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The turn picker: ``Turn 2 · What river flows through it?``, the turn's id as value."""
    picked = []
    for t in turns:
        label = f"{title(t)} · {short(question(t), 70)}"
        where = branch(t)
        if where != "current":
            label += f" · {where} branch" if where == "other" else f" · {where}"
        picked.append((label, t["turn_id"]))
    return picked


def default_pick(turns: Sequence[Mapping[str, Any]]) -> str | None:
    """The turn picked when a session is loaded: the last one on its current branch."""
    current = [t for t in turns if t.get("current")]
    chosen = (current or list(turns))[-1:] if turns else []
    return str(chosen[0]["turn_id"]) if chosen else None


def pane(turn: Mapping[str, Any]) -> str:
    """The Original branch pane: the picked turn's question and the answer it got there."""
    where = {"current": "the current branch", "other": "another branch"}.get(
        branch(turn), "a turn that was stopped"
    )
    return (
        f"**{title(turn)}**, on {where}\n\n"
        f"**Question:** {neutralise(question(turn))}\n\n"
        f"**Answer:** {neutralise(answer(turn))}"
    )
