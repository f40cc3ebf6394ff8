"""The agent as a service: one object the CLI, the HTTP API and the app all talk to.

It owns the compiled graph, its checkpointer and the turn log, serialises turns per session,
and turns LangGraph's streams into simple items: ``("event", entry)``, ``("thinking", text)``,
``("token", text)``, ``("answer", payload)`` when publish ran, ``("final", payload)`` at the end.
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from local2 import events
from local2.config import Settings, load_settings
from local2.files.audit import audit_turn
from local2.graph import AUTO, build_services, compile_graph
from local2.history import TurnLog
from local2.nodes.receive import validate_query
from local2.payload import turn_payload
from local2.prompt import build_prompt, prompt_as_json
from local2.storage import LocalLocks, open_storage
from local2.tools.base import Tool

StreamItem = tuple[str, Any]


class InvalidQuery(ValueError):
    """The question cannot be asked (empty, too long); the message says why."""


class UnknownTurn(LookupError):
    """No such session, turn or checkpoint."""


def new_session_id() -> str:
    return uuid.uuid4().hex


def _config(session_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": session_id, "checkpoint_ns": ""}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def _checkpoint_id(config: Any) -> str | None:
    return ((config or {}).get("configurable") or {}).get("checkpoint_id")


def _summary(snap: Any, writer: str) -> str:
    """One line for a checkpoint: the question being asked, or the answer given."""
    values = snap.values or {}
    if writer == "input":
        text = "new turn"
    elif values.get("answer") and "receive" not in snap.next and writer not in ("receive",):
        text = f"A: {values['answer']}"
    else:
        text = f"Q: {values.get('query') or ''}"
    return " ".join(str(text).split())[:100]


class Agent:
    """A LoCAL2 agent bound to a data directory."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        backend: str | None = None,
        model: str | None = None,
        chat_model: BaseChatModel | None = None,
        tools: Sequence[Tool] | None = None,
        checkpointer: BaseCheckpointSaver | None = None,
        memory: Any = AUTO,
        critic: Any = AUTO,
        turn_log: TurnLog | None = None,
        notice: str | None = None,
        session_locks: LocalLocks | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        self.notice = notice
        if chat_model is None:
            from local2.models.backend import make_chat_model

            chosen = make_chat_model(self.settings, backend=backend, model=model)
            chat_model, model, backend = chosen.model, chosen.name, chosen.backend
            self.notice = chosen.notice
        # Checkpoints, turn log and session locks (SQLite file, or Postgres shared by processes).
        self.storage = open_storage(
            self.settings, checkpointer=checkpointer, turn_log=turn_log, locks=session_locks
        )
        self.services = build_services(
            self.settings,
            chat_model=chat_model,
            tools=tools,
            memory=memory,
            critic=critic,
            turn_log=self.storage.turn_log,
            backend=backend,
            model=model,
        )
        self.checkpointer = self.storage.checkpointer
        self.graph: CompiledStateGraph = compile_graph(self.services, self.checkpointer)

    # -- turns -----------------------------------------------------------------------------

    def _session_lock(self, session_id: str) -> AbstractContextManager[None]:
        """Held for a whole turn: no two turns of one session run at once, in any process."""
        return self.storage.locks.hold(session_id)

    def stream(self, query: str, session_id: str | None = None) -> Iterator[StreamItem]:
        """Run one turn, yielding events, thinking and answer tokens as they happen."""
        problem = validate_query(query, self.settings.generator.max_query_chars)
        if problem:
            raise InvalidQuery(problem)
        session_id = session_id or new_session_id()
        with self._session_lock(session_id):
            yield from self._run({"query": query, "session_id": session_id}, _config(session_id))

    def _run(
        self, graph_input: dict[str, Any] | None, config: dict[str, Any]
    ) -> Iterator[StreamItem]:
        final: dict[str, Any] = {}
        for mode, data in self.graph.stream(
            graph_input, config, stream_mode=["custom", "messages", "values"]
        ):
            if mode == "custom":
                if "event" in data:
                    yield ("event", data["event"])
                if "payload" in data:
                    yield ("answer", data["payload"])
            elif mode == "messages":
                chunk, meta = data
                if meta.get("langgraph_node") != "generate" or not isinstance(
                    chunk, AIMessageChunk
                ):
                    continue
                reasoning = chunk.additional_kwargs.get("reasoning_content")
                if reasoning:
                    yield ("thinking", str(reasoning))
                if isinstance(chunk.content, str) and chunk.content:
                    yield ("token", chunk.content)
            elif mode == "values":
                final = data
        payload = turn_payload(final)
        audit_turn(self.settings, payload)
        yield ("final", payload)

    def ask(
        self,
        query: str,
        session_id: str | None = None,
        on_item: Callable[[str, Any], None] | None = None,
    ) -> dict[str, Any]:
        """Run one turn and return its payload (``response.generation``)."""
        payload: dict[str, Any] = {}
        for kind, data in self.stream(query, session_id):
            if on_item is not None:
                on_item(kind, data)
            if kind == "final":
                payload = data
        return payload

    # -- reading a session -----------------------------------------------------------------

    def state(self, session_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
        snapshot = self.graph.get_state(_config(session_id, checkpoint_id))
        if not snapshot.values:
            raise UnknownTurn(
                f"No session '{session_id}'"
                + (f" with checkpoint '{checkpoint_id}'" if checkpoint_id else "")
            )
        return dict(snapshot.values)

    def exists(self, session_id: str) -> bool:
        return bool(self.graph.get_state(_config(session_id)).values)

    def history(self, session_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """The session's clean turns (user, assistant, query_id), oldest first."""
        state = self.state(session_id)
        turns = self.services.turn_log.window(
            state.get("history_head"), limit or max(1, state.get("turn_count", 0))
        )
        rewards = state.get("rewards") or {}
        return [
            {
                "query_id": t.query_id,
                "user": t.user,
                "assistant": t.assistant,
                "created_at": t.created_at,
                "reward": rewards.get(t.query_id),
            }
            for t in turns
        ]

    def prompt_messages(self, session_id: str, checkpoint_id: str | None = None) -> list[dict]:
        """The messages array the model saw at that point (thinking removed)."""
        state = self.state(session_id, checkpoint_id)
        gen = self.settings.generator
        window = self.services.turn_log.window(state.get("history_head"), gen.max_turns)
        working = list(state.get("messages") or [])
        if state.get("answer") and state.get("decision") == "publish" and window:
            # After publish the window already holds this turn: show what the model saw then.
            window = window[:-1]
        messages = build_prompt(gen.system_prompt, window, working, gen.history_token_budget)
        return prompt_as_json(messages)

    def sessions(self, limit: int = 20) -> list[dict[str, Any]]:
        return self.services.turn_log.sessions(limit)

    def checkpoints(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """A session's checkpoints, newest first: id, step, writer, time, next, summary.

        ``current`` says whether a checkpoint is on the branch the session continues from
        (forks leave the original branch listed, with ``current`` false).
        """
        snapshots = list(self.graph.get_state_history(_config(session_id), limit=limit))
        if not snapshots:
            raise UnknownTurn(f"No session '{session_id}'")
        by_id = {_checkpoint_id(s.config): s for s in snapshots}
        on_branch: set[str] = set()
        walk: str | None = _checkpoint_id(snapshots[0].config)
        while walk in by_id and walk not in on_branch:
            on_branch.add(walk)
            walk = _checkpoint_id(by_id[walk].parent_config)
        rows = []
        for snap in snapshots:
            meta = snap.metadata or {}
            writer = self._writer(snap, by_id)
            checkpoint_id = _checkpoint_id(snap.config)
            rows.append(
                {
                    "checkpoint_id": checkpoint_id,
                    "parent_id": _checkpoint_id(snap.parent_config),
                    "step": meta.get("step"),
                    "source": meta.get("source"),
                    "node": writer,
                    "created_at": snap.created_at,
                    "next": list(snap.next),
                    "query_id": (snap.values or {}).get("query_id"),
                    "current": checkpoint_id in on_branch,
                    "summary": _summary(snap, writer),
                }
            )
        return rows

    def _writer(self, snap: Any, known: dict[str, Any]) -> str:
        """The node(s) whose writes made this checkpoint: what its parent had next."""
        meta = snap.metadata or {}
        if meta.get("source") != "loop":
            return str(meta.get("writer") or meta.get("source") or "")
        parent_id = _checkpoint_id(snap.parent_config)
        if parent_id is None:
            return "input"
        parent = known.get(parent_id)
        if parent is None:
            parent = known[parent_id] = self.graph.get_state(snap.parent_config)
        return ",".join(parent.next) or "?"

    # -- time travel -----------------------------------------------------------------------

    def replay(
        self,
        session_id: str,
        checkpoint_id: str,
        query: str | None = None,
        model: str | None = None,
    ) -> dict[str, Any]:
        """Re-run from a past checkpoint as a new branch; the original stays intact.

        Without ``query`` the run resumes exactly at that checkpoint (the nodes after it run
        again, model calls included). With ``query`` the turn that checkpoint belongs to is
        asked again with the new question, on the same history; from a checkpoint that ends
        a turn, a new turn is asked on top of it. With ``model`` another model answers.
        Returns the new turn's payload plus ``branch`` (the new checkpoint ids, newest
        first), ``replayed_from`` and ``original`` (``{query_id, query, answer}`` of the turn
        the original branch answered from there, or None). The session then continues from
        the new branch; the original's checkpoints stay listed and replayable.
        """
        agent = self if model is None else self.with_model(model)
        config = _config(session_id, checkpoint_id)
        snapshot = agent.graph.get_state(config)
        if not snapshot.values and not snapshot.next:
            raise UnknownTurn(f"No checkpoint '{checkpoint_id}' in session '{session_id}'")
        if query is not None:
            problem = validate_query(query, self.settings.generator.max_query_chars)
            if problem:
                raise InvalidQuery(problem)
        with self._session_lock(session_id):
            original = self._original_turn(session_id, snapshot)
            graph_input, run_config = agent._fork_point(snapshot, query)
            payload: dict[str, Any] = {}
            for kind, data in agent._run(graph_input, run_config):
                if kind == "final":
                    payload = data
            payload["branch"] = self._branch_since(
                session_id, {checkpoint_id, _checkpoint_id(run_config) or checkpoint_id}
            )
        payload["replayed_from"] = checkpoint_id
        payload["original"] = original
        return payload

    def _fork_point(self, snapshot: Any, query: str | None) -> tuple[dict | None, dict]:
        """Where to resume: the snapshot itself, or a new input at the start of its turn."""
        next_nodes = tuple(snapshot.next)
        if query is None:
            if not next_nodes:
                raise UnknownTurn(
                    "That checkpoint ends a turn, so there is nothing to re-run from it; pick an "
                    "earlier one, or give a new question."
                )
            return None, snapshot.config
        turn_input = {"query": query, "session_id": snapshot.config["configurable"]["thread_id"]}
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

    def _original_turn(self, session_id: str, snapshot: Any) -> dict[str, Any] | None:
        """The turn the original branch answered from ``snapshot`` (before any replay)."""
        values = snapshot.values or {}
        head = values.get("history_head")
        if not {"critique", "ingest"} & set(snapshot.next):  # not yet published here
            tuples = list(self.checkpointer.list(_config(session_id)))
            children: dict[str, list[Any]] = defaultdict(list)
            for t in tuples:
                children[_checkpoint_id(t.parent_config) or ""].append(t)
            walk = _checkpoint_id(snapshot.config) or ""
            published = None
            while children.get(walk):
                oldest = min(children[walk], key=lambda t: t.checkpoint["id"])
                walk = oldest.checkpoint["id"]
                new_head = oldest.checkpoint["channel_values"].get("history_head")
                if new_head and new_head != head:
                    published = new_head
                    break
            head = published
        turns = self.services.turn_log.window(head, 1) if head else []
        if not turns:
            return None
        return {"query_id": turns[0].query_id, "query": turns[0].user, "answer": turns[0].assistant}

    def _branch_since(self, session_id: str, stop: set[str]) -> list[str]:
        """Checkpoint ids from the session's newest back to (not including) one in ``stop``."""
        ids: list[str] = []
        found = self.checkpointer.get_tuple(_config(session_id))
        while found is not None and found.checkpoint["id"] not in stop and len(ids) < 10_000:
            ids.append(found.checkpoint["id"])
            found = (
                self.checkpointer.get_tuple(found.parent_config) if found.parent_config else None
            )
        return ids

    def with_model(self, model: str) -> Agent:
        """The same sessions, tools and memory, answered by another model on the same kind of
        server (Ollama unless this agent talks to an OpenAI-compatible one)."""
        from local2.models.backend import make_chat_model

        backend = "openai" if self.services.backend == "openai" else "ollama"
        return Agent(
            self.settings,
            chat_model=make_chat_model(self.settings, backend, model).model,
            backend=backend,
            model=model,
            tools=list(self.services.tools.values()),
            memory=self.services.memory,
            critic=self.services.critic,
            checkpointer=self.checkpointer,
            turn_log=self.services.turn_log,
            notice=self.notice,
            session_locks=self.storage.locks,
        )

    # -- ratings ---------------------------------------------------------------------------

    def feedback(
        self, session_id: str, query_id: str, rating: int, comment: str | None = None
    ) -> dict[str, Any]:
        """Record a person's 1-5 rating of a turn: ``user.feedback`` then ``reward.event``."""
        if not isinstance(rating, int) or not 1 <= rating <= 5:
            raise ValueError(f"A rating is a whole number from 1 to 5, got {rating!r}.")
        if not self.exists(session_id):
            raise UnknownTurn(f"No session '{session_id}'")
        if self.services.turn_log.find(session_id, query_id) is None:
            raise UnknownTurn(f"No turn '{query_id}' in session '{session_id}'")
        now = time.time()
        base = {"started_at": now}
        from local2.nodes.common import event

        given = event(
            base,
            events.USER_FEEDBACK,
            session_id=session_id,
            query_id=query_id,
            rating=rating,
            comment=comment,
        )
        reward = event(
            base,
            events.REWARD_EVENT,
            session_id=session_id,
            query_id=query_id,
            reward=rating,
        )
        self.graph.update_state(
            _config(session_id),
            {
                "rewards": {query_id: {"rating": rating, "comment": comment, "at": now}},
                "event_log": [given, reward],
            },
            as_node="ingest",
        )
        annotated = 0
        if self.services.memory is not None:
            try:
                annotated = self.services.memory.annotate(query_id, reward=float(rating))
            except Exception:  # the rating is kept in the session even if memory is down
                annotated = 0
        return {
            "session_id": session_id,
            "query_id": query_id,
            "rating": rating,
            "engrams_annotated": annotated,
            "events": [given, reward],
        }

    def close(self) -> None:
        self.services.runner.shutdown()
        self.storage.close()
