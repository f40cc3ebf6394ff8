"""Time travel: re-run a session from any past checkpoint as a new branch.

The original branch stays intact and listed; the session then continues from the new one.
Without a new question the run resumes exactly at the checkpoint (the nodes after it run
again, model calls included); with one, the turn that checkpoint belongs to is asked again on
the same history (or, from a checkpoint that ends a turn, a new turn is asked on top of it).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import StateSnapshot

from local2 import events
from local2.config import Settings
from local2.contracts import (
    Approver,
    EventEntry,
    OriginalTurn,
    StreamItem,
    TurnPayload,
    collect_turn,
)
from local2.errors import InvalidQuery, UnknownTurn
from local2.graph import (
    RESET,
    Services,
    TurnGraph,
    TurnState,
    branches,
    event,
    validate_query,
)
from local2.ids import check_session_id
from local2.service.chat._running import GraphRuns, RunningTurn, Turns, thread_config
from local2.service.chat._sessions import SessionReader


@dataclass(eq=False)
class TimeTravel:
    """Replays and forks of a session's checkpoints."""

    settings: Settings
    services: Services
    graph: TurnGraph
    checkpointer: BaseCheckpointSaver[Any] | None
    running: Turns
    runs: GraphRuns
    reader: SessionReader
    for_model: Callable[[str], TimeTravel] | None = None  # the same replay, another model

    def replay(
        self,
        session_id: str,
        checkpoint_id: str,
        query: str | None = None,
        model: str | None = None,
        approve: Approver | None = None,
    ) -> TurnPayload:
        """Re-run from a past checkpoint as a new branch; returns the new turn's payload.

        The payload also has ``branch`` (the new checkpoint ids, newest first),
        ``replayed_from`` and ``original`` (``{query_id, query, answer, model, backend}`` of
        the turn the original branch answered from there, or None). A tool call that needs
        the person is put to ``approve``; without one the replay pauses like a turn
        (``status: awaiting_approval``).
        """
        return collect_turn(self.replay_stream(session_id, checkpoint_id, query, model, approve))

    def replay_stream(
        self,
        session_id: str,
        checkpoint_id: str,
        query: str | None = None,
        model: str | None = None,
        approve: Approver | None = None,
    ) -> Iterator[StreamItem]:
        """:meth:`replay`, streamed like a turn: events, thinking, tokens, then the payload.

        A turn resumed part-way gets its own clock: its event times count from the replay's
        start (``replay.started`` at t=0), not from the original question.
        """
        session_id = check_session_id(session_id)  # once: what follows is handed it checked
        answering = self
        if model is not None:
            assert self.for_model is not None, "replaying with another model needs for_model"
            answering = self.for_model(model)
        snapshot = answering.graph.get_state(thread_config(session_id, checkpoint_id))
        if not snapshot.values and not snapshot.next:
            raise UnknownTurn(f"No checkpoint '{checkpoint_id}' in session '{session_id}'")
        if query is not None:
            problem = validate_query(query, self.settings.generator.max_query_chars)
            if problem:
                raise InvalidQuery(problem)

        def produce(turn: RunningTurn) -> Iterator[StreamItem]:
            original = self.original_turn(session_id, snapshot)
            graph_input, run_config = answering.fork_point(snapshot, query)
            stop = {checkpoint_id, branches.checkpoint_id(run_config) or checkpoint_id}
            if graph_input is None:  # resumed part-way: the replayed turn's own clock
                run_config, started = answering.restart_clock(snapshot)
                yield ("event", started)
            for kind, data in answering.runs.run(graph_input, run_config, turn, approve):
                if kind == "final":
                    data = {
                        **data,
                        "branch": self.branch_since(session_id, stop),
                        "replayed_from": checkpoint_id,
                        "original": original,
                    }
                yield kind, data

        yield from self.running.run(session_id, produce)

    def restart_clock(self, snapshot: StateSnapshot) -> tuple[RunnableConfig, EventEntry]:
        """A new checkpoint beside ``snapshot`` whose turn starts now, with a fresh event log."""
        now = time.time()
        started = event(
            {"started_at": now},
            events.REPLAY_STARTED,
            from_checkpoint=branches.checkpoint_id(snapshot.config),
            query_id=(snapshot.values or {}).get("query_id"),
        )
        writer = self.reader.writer(snapshot, {})
        config = self.graph.update_state(
            snapshot.config,
            {"started_at": now, "event_log": [RESET, started]},
            as_node=writer if writer in self.graph.nodes else None,
        )
        return config, started

    def fork_point(
        self, snapshot: StateSnapshot, query: str | None
    ) -> tuple[TurnState | None, RunnableConfig]:
        """Where to resume: the snapshot itself, or a new input at the start of its turn."""
        next_nodes = tuple(snapshot.next)
        if query is None:
            if not next_nodes:
                raise UnknownTurn(
                    "That checkpoint ends a turn, so there is nothing to re-run from it; pick an "
                    "earlier one, or give a new question."
                )
            return None, snapshot.config
        session_id = snapshot.config["configurable"]["thread_id"]
        turn_input: TurnState = {"query": query, "session_id": session_id}
        if not next_nodes or "__start__" in next_nodes or "receive" in next_nodes:
            # Between turns (or before receive ran): the new question is asked from here.
            return turn_input, snapshot.config
        # Mid-turn: ask this turn again from its start, on the history it saw.
        start = snapshot
        for _ in range(10_000):
            if start.parent_config is None:
                break
            start = self.graph.get_state(start.parent_config)
            if "receive" in start.next or "__start__" in start.next:
                return turn_input, start.config
        raise UnknownTurn("Cannot find where that checkpoint's turn started.")

    def original_turn(self, session_id: str, snapshot: StateSnapshot) -> OriginalTurn | None:
        """The turn the original branch answered from ``snapshot`` (before any replay)."""
        values = snapshot.values or {}
        head = values.get("history_head")
        if not branches.AFTER_PUBLISH & set(snapshot.next):  # not yet published here
            assert self.checkpointer is not None
            tuples = list(self.checkpointer.list(thread_config(session_id)))
            children: dict[str, list[Any]] = defaultdict(list)
            for t in tuples:
                children[branches.checkpoint_id(t.parent_config) or ""].append(t)
            walk = branches.checkpoint_id(snapshot.config) or ""
            published = None
            while children.get(walk):
                oldest = min(children[walk], key=lambda t: t.checkpoint["id"])
                walk = oldest.checkpoint["id"]
                new_head = oldest.checkpoint["channel_values"].get("history_head")
                if new_head and new_head != head:
                    published = new_head
                    break
            head = published
        turns = self.services.turn_log.window(head, 1, records=True) if head else []
        if not turns:
            return None
        record = turns[0].record or {}
        return {
            "query_id": turns[0].query_id,
            "query": turns[0].user,
            "answer": turns[0].assistant,
            "model": record.get("model"),
            "backend": record.get("backend"),
        }

    def branch_since(self, session_id: str, stop: set[str]) -> list[str]:
        """Checkpoint ids from the session's newest back to (not including) one in ``stop``."""
        assert self.checkpointer is not None
        ids: list[str] = []
        found = self.checkpointer.get_tuple(thread_config(session_id))
        while found is not None and found.checkpoint["id"] not in stop and len(ids) < 10_000:
            ids.append(found.checkpoint["id"])
            found = (
                self.checkpointer.get_tuple(found.parent_config) if found.parent_config else None
            )
        return ids
