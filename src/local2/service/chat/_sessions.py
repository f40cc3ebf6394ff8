"""Reading a session: its state, its clean history, its checkpoints, the prompt the model saw.

A session continues from its *head*: the end of the last turn that settled on the branch it
is on (:mod:`local2.graph.branches`), never what a stopped or failed turn left behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from local2.config import Settings
from local2.contracts import (
    LOCAL_NAME,
    CheckpointRow,
    CheckpointTurn,
    HistoryTurn,
    SessionHistory,
    SessionSummary,
)
from local2.errors import UnknownTurn
from local2.graph import Services, TurnGraph, TurnState, branches, build_prompt, prompt_as_json
from local2.ids import check_session_id
from local2.models import prompted_messages
from local2.service.chat._checkpoint_turns import group_turns
from local2.service.chat._running import Turns, thread_config, thread_of

checkpoint_id = branches.checkpoint_id


def summary(snap: StateSnapshot, writer: str) -> str:
    """One line for a checkpoint: the question being asked, or the answer given."""
    values = snap.values or {}
    if writer == "input":
        text = "new turn"
    elif values.get("answer") and "receive" not in snap.next and writer not in ("receive",):
        text = f"A: {values['answer']}"
    else:
        text = f"Q: {values.get('query') or ''}"
    return " ".join(str(text).split())[:100]


@dataclass(eq=False)
class SessionReader:
    """What a session holds, read from the checkpointer and the turn log."""

    settings: Settings
    services: Services
    graph: TurnGraph
    running: Turns

    def head(self, session_id: str) -> StateSnapshot | None:
        """The checkpoint a session continues from, or None."""
        live = self.running.running(session_id) is not None
        return branches.find_head(self.graph, thread_config(session_id), live=live)

    def exists(self, session_id: str) -> bool:
        """Whether the session has something to continue from (a turn that settled)."""
        return self.head(session_id) is not None

    def head_id(self, session_id: str) -> str | None:
        """The id of the checkpoint the session continues from (its current branch's end)."""
        head = self.head(session_id)
        return checkpoint_id(head.config) if head is not None else None

    def head_or_unknown(self, session_id: str) -> StateSnapshot:
        """:meth:`head`; :class:`~local2.errors.UnknownTurn` when the session has none."""
        snapshot = self.head(session_id)
        if snapshot is None or not snapshot.values:
            raise UnknownTurn(f"No session '{session_id}'")
        return snapshot

    def continue_from(
        self, session_id: str, checkpoint_id: str | None, latest: StateSnapshot | None = None
    ) -> RunnableConfig:
        """Where the next turn of a session starts: its head, or a chosen turn's end.

        ``latest``: the session's newest checkpoint, if already read. (A turn's: its id was
        checked when it started.)"""
        if checkpoint_id:
            chosen = self.graph.get_state(thread_of(session_id, checkpoint_id))
            if not chosen.values:
                raise UnknownTurn(f"No checkpoint '{checkpoint_id}' in session '{session_id}'")
            return chosen.config
        config = thread_of(session_id)
        if latest is None:
            latest = self.graph.get_state(config)
        head = branches.find_head(self.graph, config, latest=latest)
        if head is latest:
            return config
        if head is None:  # every turn so far died: start again from the very first checkpoint
            start = branches.root(self.graph, config)
            return start.config if start is not None else config
        return head.config

    def state(self, session_id: str, checkpoint_id: str | None = None) -> TurnState:
        """The state at a checkpoint, or at the session's head (never a dead turn's leftover)."""
        snapshot: StateSnapshot | None
        if checkpoint_id:
            snapshot = self.graph.get_state(thread_config(session_id, checkpoint_id))
        else:
            snapshot = self.head(session_id)
        if snapshot is None or not snapshot.values:
            raise UnknownTurn(
                f"No session '{session_id}'"
                + (f" with checkpoint '{checkpoint_id}'" if checkpoint_id else "")
            )
        # LangGraph types a snapshot's values as any dict; this graph's are its TurnState.
        return cast("TurnState", {**snapshot.values})

    def history(
        self,
        session_id: str,
        limit: int | None = None,
        *,
        checkpoint_id: str | None = None,
        detail: bool = False,
        grades: bool = False,
    ) -> list[HistoryTurn]:
        """The session's clean turns (user, assistant, query_id), oldest first.

        ``checkpoint_id``: the turns as seen from that checkpoint (another branch).
        ``detail``: also each turn's ``record`` (thinking, tool calls, memory hits, events),
        its critic grade (``critique``) and the person's latest ``rating``. ``grades``: the
        grade and rating without the record.
        """
        state = self.state(session_id, checkpoint_id)
        turn_log = self.services.turn_log
        turns = turn_log.window(
            state.get("history_head"),
            limit or max(1, state.get("turn_count", 0)),
            records=detail,
        )
        rewards = state.get("rewards") or {}
        noted = detail or grades
        notes = turn_log.notes([t.id for t in turns]) if noted else {}
        rows: list[HistoryTurn] = []
        for t in turns:
            row: HistoryTurn = {
                "query_id": t.query_id,
                "user": t.user,
                "assistant": t.assistant,
                "created_at": t.created_at,
                "reward": rewards.get(t.query_id),
            }
            if detail:
                row["record"] = t.record or {}
            if noted:
                said = notes.get(t.id, {})
                row["critique"] = said.get("critique")
                row["rating"] = said.get("rating") or rewards.get(t.query_id)
            rows.append(row)
        return rows

    def session(self, session_id: str, limit: int = 50) -> SessionHistory:
        """The session's clean turns, each with its grade and rating, and its checkpoints
        (newest first, at most ``limit``): ``GET /sessions/{id}/history``, the id checked
        once for both."""
        session_id = check_session_id(session_id)
        return {
            "session_id": session_id,
            "turns": self.history(session_id, grades=True),
            "checkpoints": self.checkpoints(session_id, limit),
        }

    def prompt_messages(
        self, session_id: str, checkpoint_id: str | None = None
    ) -> list[dict[str, Any]]:  # LangChain's message dicts, as JSON (graph.prompt_as_json)
        """The messages array the model saw at that point (thinking removed)."""
        state = self.state(session_id, checkpoint_id)
        gen = self.settings.generator
        window = self.services.turn_log.window(state.get("history_head"), gen.max_turns)
        working = list(state.get("messages") or [])
        if state.get("answer") and state.get("decision") == "publish" and window:
            # After publish the window already holds this turn: show what the model saw then.
            window = window[:-1]
        messages = build_prompt(gen.system_prompt, window, working, gen.history_token_budget)
        if not self.services.native_tools:  # its tools were described in its prompt
            schemas = [t.schema() for t in self.services.tools.values()]
            messages = prompted_messages(messages, schemas or None)
        return prompt_as_json(messages)

    def turn(self, session_id: str, query_id: str) -> HistoryTurn | None:
        """One logged turn of a session, with its record (None: no such turn was logged, e.g.
        one stopped before its answer)."""
        found = self.services.turn_log.find(session_id, query_id)
        if found is None:
            return None
        return {
            "query_id": found.query_id,
            "user": found.user,
            "assistant": found.assistant,
            "created_at": found.created_at,
            "reward": None,
            "record": found.record or {},
        }

    def recent(self, limit: int = 20, owner: str | None = LOCAL_NAME) -> list[SessionSummary]:
        """Recent sessions of ``owner`` (None: everyone's), newest first."""
        return self.services.turn_log.sessions(limit, owner)

    def checkpoints(self, session_id: str, limit: int = 50) -> list[CheckpointRow]:
        """A session's checkpoints, newest first: id, step, writer, time, next, summary.

        ``current`` says whether a checkpoint is on the branch the session continues from
        (forks leave the original branch listed, with ``current`` false); ``abandoned`` marks
        what a turn that was stopped, failed or was killed part-way left behind.
        """
        return self._rows(session_id, self._snapshots(session_id, limit))

    def checkpoint_turns(self, session_id: str, limit: int = 1000) -> list[CheckpointTurn]:
        """A session's checkpoints grouped by turn, oldest turn first, each labelled with its
        question and the answer that belongs to it (:mod:`local2.service.chat._checkpoint_turns`);
        among its ``limit`` newest checkpoints."""
        snapshots = self._snapshots(session_id, limit)
        values = {checkpoint_id(s.config): s.values or {} for s in snapshots}
        return group_turns(self._rows(session_id, snapshots), values)

    def _snapshots(self, session_id: str, limit: int) -> list[StateSnapshot]:
        snapshots = list(self.graph.get_state_history(thread_config(session_id), limit=limit))
        if not snapshots:
            raise UnknownTurn(f"No session '{session_id}'")
        return snapshots

    def _rows(self, session_id: str, snapshots: list[StateSnapshot]) -> list[CheckpointRow]:
        by_id = {checkpoint_id(s.config): s for s in snapshots}
        live = self.running.running(session_id) is not None
        head = branches.pick_head(snapshots, live=live)
        on_branch: set[str] = set()
        walk: str | None = checkpoint_id(head.config) if head is not None else None
        while walk is not None and walk in by_id and walk not in on_branch:
            on_branch.add(walk)
            walk = checkpoint_id(by_id[walk].parent_config)
        rows: list[CheckpointRow] = []
        for snap in snapshots:
            meta = snap.metadata or {}
            writer = self.writer(snap, by_id)
            this_id = checkpoint_id(snap.config)
            rows.append(
                {
                    "checkpoint_id": this_id,
                    "parent_id": checkpoint_id(snap.parent_config),
                    "step": meta.get("step"),
                    "source": meta.get("source"),
                    "node": writer,
                    "created_at": snap.created_at,
                    "next": list(snap.next),
                    "query_id": (snap.values or {}).get("query_id"),
                    "current": this_id in on_branch,
                    "settled": branches.settled(snap),
                    "summary": summary(snap, writer),
                    "abandoned": False,
                }
            )
        dead = branches.abandoned(rows, on_branch)
        for row in rows:
            row["abandoned"] = row["checkpoint_id"] in dead
        return rows

    def writer(self, snap: StateSnapshot, known: dict[str | None, Any]) -> str:
        """The node(s) whose writes made this checkpoint: what its parent had next."""
        meta = snap.metadata or {}
        if meta.get("source") != "loop":
            return str(meta.get("writer") or meta.get("source") or "")
        parent_id = checkpoint_id(snap.parent_config)
        if parent_id is None or snap.parent_config is None:
            return "input"
        parent = known.get(parent_id)
        if parent is None:
            parent = known[parent_id] = self.graph.get_state(snap.parent_config)
        return ",".join(parent.next) or "?"
