"""A session's checkpoints grouped by turn: what a person picks from in time travel.

LangGraph writes a checkpoint after every step, so four questions leave some thirty, named
by the graph's nodes; a person thinks in questions. A turn starts at an *input* checkpoint
(the question handed to the graph, before any node ran) or at a replay's restart (the
checkpoint :meth:`~local2.service.chat.TimeTravel.restart_clock` writes to run a turn
again from part-way); every other checkpoint belongs to the turn of its nearest such
ancestor.

A checkpoint's ``answer`` is only this turn's once the turn has published: the first
checkpoints of a turn still carry the previous turn's answer beside the new question. So a
turn's answer is read from its own published checkpoints, never from its first ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from local2 import events
from local2.contracts import CheckpointRow, CheckpointTurn
from local2.graph import branches


def published(row: CheckpointRow) -> bool:
    """Whether the turn had published its answer at this checkpoint."""
    return set(row["next"]) <= branches.AFTER_PUBLISH


def replay_restart(row: CheckpointRow, values: Mapping[str, Any]) -> bool:
    """Whether this checkpoint is where a replay restarted its turn (its clock set to 0)."""
    log = values.get("event_log") or []
    first = log[0] if log and isinstance(log[0], Mapping) else {}
    return (
        row["source"] == "update"
        and first.get("subject") == events.REPLAY_STARTED
        and first.get("from_checkpoint") == row["parent_id"]
    )


def group_turns(
    rows: Sequence[CheckpointRow], values: Mapping[str | None, Mapping[str, Any]]
) -> list[CheckpointTurn]:
    """The turns among ``rows`` (a session's checkpoints, newest first, as
    :meth:`~local2.service.chat.SessionReader.checkpoints` lists them), in the order of
    the conversation: by number, and a turn asked again (forked, replayed) after the first.

    ``values``: each checkpoint's state, by id. A turn whose start is older than the rows
    read starts at the oldest of its checkpoints that was read.
    """
    by_id = {row["checkpoint_id"]: row for row in rows}
    starts = {
        row["checkpoint_id"]
        for row in rows
        if row["source"] == "input" or replay_restart(row, values.get(row["checkpoint_id"], {}))
    }
    owner: dict[str | None, str | None] = {}
    for row in reversed(rows):  # oldest first: a checkpoint's parent is placed before it
        cid, parent = row["checkpoint_id"], row["parent_id"]
        owner[cid] = cid if cid in starts or parent not in by_id else owner.get(parent, cid)
    members: dict[str | None, list[CheckpointRow]] = {}
    for row in rows:  # newest first, kept so
        members.setdefault(owner[row["checkpoint_id"]], []).append(row)
    turns = [_turn(start, members[start], by_id, owner, values) for start in members if start]
    turns.sort(key=lambda t: (t["number"], t["created_at"] or "", t["turn_id"]))
    return turns


def _turn(
    start_id: str,
    mine: list[CheckpointRow],  # newest first
    by_id: Mapping[str | None, CheckpointRow],
    owner: Mapping[str | None, str | None],
    values: Mapping[str | None, Mapping[str, Any]],
) -> CheckpointTurn:
    start = by_id[start_id]
    is_input = start["source"] == "input"
    # An input checkpoint still holds the turn before it: this turn's own state starts after.
    own = [row for row in mine if not (is_input and row["checkpoint_id"] == start_id)]
    first_values = values.get(own[-1]["checkpoint_id"], {}) if own else {}
    answered = [row for row in own if published(row)]
    waiting = any(row["settled"] and not published(row) for row in own)
    latest = values.get(answered[0]["checkpoint_id"] if answered else mine[0]["checkpoint_id"], {})
    if answered:
        number = int(latest.get("turn_count") or 1)
    else:  # not published yet: one more than the turns before it
        before = values.get(start_id, {}) if is_input else first_values
        number = int(before.get("turn_count") or 0) + 1
    parent = by_id.get(start["parent_id"])
    asks_again = parent is not None and not (is_input and parent["settled"])
    return {
        "turn_id": start_id,
        "number": number,
        "question": str(first_values.get("query") or ""),
        "answer": str(latest.get("answer") or "") if answered else None,
        "status": "answered" if answered else "awaiting_approval" if waiting else "unfinished",
        "query_id": latest.get("query_id") if answered else None,
        # started inside another turn (a fork of its question, or a replay): asks it again
        "rerun_of": owner.get(start["parent_id"]) if asks_again else None,
        "replay": not is_input,
        # its last checkpoint (an earlier one may lie under a fork made from inside the turn)
        "current": mine[0]["current"],
        "abandoned": not answered and mine[0]["abandoned"],
        "fork_from": start_id,
        "replay_from": _replay_from(own),
        "created_at": start["created_at"],
        "checkpoints": [str(row["checkpoint_id"]) for row in mine],
    }


def _replay_from(own: list[CheckpointRow]) -> str | None:
    """Where a replay of the turn resumes: once the question was received (memory recalled),
    so the model's steps run again on its own clock; a turn stopped before that, its start."""
    resumable = [row for row in reversed(own) if row["next"]]  # oldest first
    received = [row for row in resumable if not {"__start__", "receive"} & set(row["next"])]
    chosen = (received or resumable)[:1]
    return str(chosen[0]["checkpoint_id"]) if chosen else None
