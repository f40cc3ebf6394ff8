"""The agent as a service: one object the CLI, the HTTP API and the app all talk to.

It owns the compiled graph, its checkpointer and the turn log, serialises turns per session,
and turns LangGraph's streams into simple items: ``("event", entry)``, ``("thinking", text)``,
``("token", text)``, ``("answer", payload)`` when publish ran, ``("approval", request)`` when a
tool call waits for the person, ``("final", payload)`` at the end. A turn paused for approval
ends with a payload whose ``status`` is ``awaiting_approval``; :meth:`Agent.resume` goes on.
A turn can be stopped before its answer (:meth:`Agent.stop`); one that is stopped, fails or
is killed part-way leaves nothing the session continues from (:mod:`local2.graph.branches`).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from local2 import events
from local2.config import Settings, load_settings
from local2.contracts import approval
from local2.contracts.approval import Approver, Decision
from local2.errors import AwaitingApproval, InvalidQuery, SessionBusy, TurnCancelled, UnknownTurn
from local2.graph import branches
from local2.graph.nodes.recall import AHEAD_KEY, recall_ahead
from local2.graph.nodes.receive import validate_query
from local2.graph.payload import turn_payload
from local2.graph.prompt import build_prompt, prompt_as_json
from local2.graph.state import RESET
from local2.graph.topology import AUTO, build_services, compile_graph
from local2.ids import check_session_id
from local2.service.background import BackgroundTurn
from local2.service.running import RunningTurn, StopSignal, StreamItem, Turns
from local2.storage.audit_log import audit_turn
from local2.storage.conversations import SharedLocks, open_storage
from local2.storage.turn_log import TurnLog
from local2.tools.base import Tool

log = logging.getLogger(__name__)
CLOSE_WAIT_S = 60.0  # how long close() waits for background turns (a critic grading)

__all__ = [
    "Agent",
    "AwaitingApproval",
    "InvalidQuery",
    "SessionBusy",
    "StreamItem",
    "TurnCancelled",
    "UnknownTurn",
]


def new_session_id() -> str:
    return uuid.uuid4().hex


def _config(session_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    """The thread config of a session; an id breaking the rule raises :class:`InvalidId`."""
    check_session_id(session_id)
    configurable: dict[str, Any] = {"thread_id": session_id, "checkpoint_ns": ""}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


_checkpoint_id = branches.checkpoint_id


def _pending_in(snapshot: Any) -> dict[str, Any] | None:
    """The approval request a checkpoint (a StateSnapshot) waits on, or None."""
    return next(
        (
            {**dict(i.value), "interrupt_id": i.id}
            for i in snapshot.interrupts
            if approval.is_request(i.value)
        ),
        None,
    )


def _awaiting_payload(final: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """The payload of a turn paused for approval: what it did so far, and what waits."""
    payload = turn_payload(final)
    asked = list(request.get("events") or [])
    payload["event_log"] = [*payload["event_log"], *asked]
    payload["events"] = [*payload["events"], *(e["subject"] for e in asked)]
    payload["status"] = "awaiting_approval"
    payload["approval"] = {"calls": request.get("calls") or [], "resume": request.get("resume")}
    return payload


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
        session_locks: SharedLocks | None = None,
        native_tools: bool | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        if chat_model is None:
            from local2.models.backend import make_chat_model

            chosen = make_chat_model(self.settings, backend=backend, model=model)
            chat_model, model, backend = chosen.model, chosen.name, chosen.backend
            native_tools, notice = chosen.native_tools, chosen.notice
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
            native_tools=native_tools,
        )
        self.services.votes = self.storage.votes  # None: SQLite, opened on first vote
        from local2.service.notices import startup_notices

        # What the person must be told: a fallback model, canned search, a critic that is
        # off, memory on a fallback embedder or off.
        self.notices: list[str] = [
            *startup_notices(self.settings, self.services, notice),
            *self.services.notices,
        ]
        self.checkpointer = self.storage.checkpointer
        self.graph: CompiledStateGraph = compile_graph(self.services, self.checkpointer)
        # A second respondent the app and the API use unless a request says otherwise
        # (``local2 serve --model-b``); see :mod:`local2.graph.compare`.
        self.compare_default: dict[str, Any] | None = None
        # One turn at a time per session: in this process, and in every process sharing
        # the store (a Postgres advisory lock when the store is Postgres).
        self.turns = Turns(self.storage.locks)
        self._running: set[BackgroundTurn] = set()  # turns finishing in the background (start())
        self._running_guard = threading.Lock()
        # Where a turn's memory recall runs while the graph starts (local2.graph.nodes.recall).
        self._ahead = ThreadPoolExecutor(max_workers=2, thread_name_prefix="local2-recall")

    @property
    def notice(self) -> str | None:
        """The start-up notices as one text (None when there are none)."""
        return "\n\n".join(self.notices) or None

    def warm_up(self) -> None:
        """Do a first turn's one-time work before the first question, for a server that has
        just started: memory's client and index, the tool schemas bound to the model, the
        reply checks' patterns compiled. A first turn took ~100 ms more than later ones
        without it (``bench/overhead.py``). Writes nothing; a failure is only logged."""
        from local2.graph.nodes.answer_guard import unusable_reason, without_listing_lines

        services = self.services
        try:
            schemas = {name: tool.parameters for name, tool in services.tools.items()}
            if schemas and services.native_tools:
                services.chat_model.bind_tools([t.schema() for t in services.tools.values()])
            sample = "Warming up."
            unusable_reason(sample, schemas)
            without_listing_lines(sample)
            if services.tool_parser is not None:
                services.tool_parser(sample, schemas)
            if services.memory is not None and hasattr(services.memory, "warm_up"):
                services.memory.warm_up()
        except Exception as exc:  # the first turn does the same work, and reports problems
            log.warning("warm-up failed: %s: %s", type(exc).__name__, exc)

    # -- turns -----------------------------------------------------------------------------

    def _session_lock(self, session_id: str) -> AbstractContextManager[None]:
        """Held while a turn of ``session_id`` runs, in any process (ratings wait for it)."""
        return self.turns.hold(session_id)

    def stream(
        self,
        query: str,
        session_id: str | None = None,
        approve: Approver | None = None,
        *,
        checkpoint_id: str | None = None,
        wait: bool = True,
        options: dict[str, Any] | None = None,
        tokens: bool = True,
        handed_over: threading.Event | None = None,
    ) -> Iterator[StreamItem]:
        """Run one turn, yielding events, thinking and answer tokens as they happen.

        The question and the session id are checked here, before anything runs
        (:class:`InvalidQuery`, :class:`~local2.ids.InvalidId`).
        The turn continues the session from its head, or from ``checkpoint_id`` (the end of a
        turn on another branch, which the session then continues on). :meth:`stop` ends it
        before its answer with :class:`TurnCancelled` and nothing recorded. A turn of the
        same session already running is waited for, or refused (:class:`SessionBusy`) when
        ``wait`` is false. A tool call that needs the person is put to ``approve`` (see
        :mod:`local2.contracts.approval`) and the turn goes on; without one the turn pauses and ends
        with an ``awaiting_approval`` payload, to be continued with :meth:`resume`.
        ``options`` go into the run's config: ``{"compare": {"model", "temperature"}}`` has a
        second respondent answer too (:mod:`local2.graph.compare`), ``{"retry": ...}`` is a retry.
        Without ``tokens`` no ``thinking``/``token`` items come (the payload still has both),
        nor, unless two respondents answer, ``event`` items (the payload's ``event_log`` has
        them): the model is not streamed through LangGraph, a few ms less per turn for a
        caller that wants only the answer (``POST /query``, ``bench/overhead.py``).
        The critic and memory start once the answer is yielded, or, with ``handed_over``, once
        the caller sets it (a reader in another thread; see :mod:`local2.service.running`).
        """
        session_id, produce = self._turn(query, session_id, checkpoint_id, options, approve, tokens)
        return self.turns.run(session_id, produce, wait=wait, handed_over=handed_over)

    def _turn(
        self,
        query: str,
        session_id: str | None,
        checkpoint_id: str | None,
        options: dict[str, Any] | None,
        approve: Approver | None,
        tokens: bool,
    ) -> tuple[str, Callable[[RunningTurn], Iterator[StreamItem]]]:
        """The checked session id, and the turn's item producer (see :meth:`stream`)."""
        problem = validate_query(query, self.settings.generator.max_query_chars)
        if problem:
            raise InvalidQuery(problem)
        session_id = check_session_id(session_id) if session_id else new_session_id()

        def produce(turn: RunningTurn) -> Iterator[StreamItem]:
            # Memory is searched for the question while LangGraph starts the run (the
            # session's lock is held: the last turn's memory writes are done).
            ahead = recall_ahead(self.services, query, self._ahead.submit)
            latest = self.graph.get_state(_config(session_id))  # read once, used twice
            waiting = _pending_in(latest)
            if waiting is not None:
                raise AwaitingApproval(waiting)
            config = self._continue_from(session_id, checkpoint_id, latest)
            extra = {**(options or {}), **({AHEAD_KEY: ahead} if ahead else {})}
            if extra:
                config = {**config, "configurable": {**config["configurable"], **extra}}
            turn_input = {"query": query, "session_id": session_id}
            yield from self._run(turn_input, config, turn, approve, tokens=tokens)

        return session_id, produce

    def pending_approval(self, session_id: str) -> dict[str, Any] | None:
        """The request a paused turn of this session waits on, or None.

        ``interrupt_id`` names it: a compare turn can wait on both respondents at once, and
        each request is answered in turn.
        """
        return _pending_in(self.graph.get_state(_config(session_id)))

    def resume(
        self,
        session_id: str,
        decision: Decision,
        approve: Approver | None = None,
        by: str = approval.PERSON,
    ) -> Iterator[StreamItem]:
        """Continue a paused turn with the person's decision (all calls, or per call id)."""

        def produce(turn: RunningTurn) -> Iterator[StreamItem]:
            waiting = self.pending_approval(session_id)
            if waiting is None:
                raise UnknownTurn(f"Nothing in session '{session_id}' is waiting for approval")
            from langgraph.types import Command

            answer = approval.answer(waiting, decision, by=by)
            resume = Command(resume={waiting["interrupt_id"]: answer})
            yield from self._run(resume, _config(session_id), turn, approve)

        yield from self.turns.run(session_id, produce)

    def decide(
        self, session_id: str, decision: Decision, approve: Approver | None = None
    ) -> dict[str, Any]:
        """:meth:`resume` to the end; returns the payload (which may wait again)."""
        payload: dict[str, Any] = {}
        for kind, data in self.resume(session_id, decision, approve):
            if kind == "final":
                payload = data
        return payload

    def stop(self, session_id: str) -> bool:
        """Stop the running turn of ``session_id`` before its answer; False if there is none."""
        return self.turns.stop(session_id)

    def is_running(self, session_id: str) -> bool:
        """Whether a turn of ``session_id`` is running here (and not being stopped)."""
        turn = self.turns.running(session_id)
        return turn is not None and not turn.stop_requested.is_set()

    def _continue_from(
        self, session_id: str, checkpoint_id: str | None, latest: Any = None
    ) -> dict[str, Any]:
        """Where the next turn of a session starts: its head, or a chosen turn's end.

        ``latest``: the session's newest checkpoint (a StateSnapshot), if already read."""
        if checkpoint_id:
            chosen = self.graph.get_state(_config(session_id, checkpoint_id))
            if not chosen.values:
                raise UnknownTurn(f"No checkpoint '{checkpoint_id}' in session '{session_id}'")
            return chosen.config
        config = _config(session_id)
        if latest is None:
            latest = self.graph.get_state(config)
        head = branches.find_head(self.graph, config, latest=latest)
        if head is latest:
            return config
        if head is None:  # every turn so far died: start again from the very first checkpoint
            start = branches.root(self.graph, config)
            return start.config if start is not None else config
        return head.config

    def _head(self, session_id: str) -> Any:
        """The checkpoint a session continues from (a StateSnapshot), or None."""
        live = self.turns.running(session_id) is not None
        return branches.find_head(self.graph, _config(session_id), live=live)

    def start(
        self,
        query: str,
        session_id: str | None = None,
        options: dict[str, Any] | None = None,
        *,
        tokens: bool = True,
        wait: bool = True,
    ) -> BackgroundTurn:
        """Start one turn in its own thread; it runs to its end whoever reads it.

        ``start(...).until_answer()`` is the payload at publish, while the critic grades;
        iterating the :class:`~local2.service.background.BackgroundTurn` gives every item as
        it comes.
        ``options``, ``tokens`` and ``wait`` are :meth:`stream`'s.
        """
        session_id, produce = self._turn(query, session_id, None, options, None, tokens)
        turn = BackgroundTurn(on_done=self._turn_done)
        with self._running_guard:
            self._running.add(turn)
        try:
            turn.turn = self.turns.launch(
                session_id, produce, turn.put, turn.end, wait=wait, handed_over=turn.handed_over
            )
        except BaseException:
            self._turn_done(turn)
            raise
        return turn

    def start_now(
        self,
        query: str,
        session_id: str | None = None,
        options: dict[str, Any] | None = None,
        *,
        tokens: bool = True,
    ) -> BackgroundTurn | None:
        """:meth:`start`, if that means no waiting (so an event loop may call it): None when
        a turn of the session is running, or its lock is taken over the network."""
        if self.turns.remote:
            return None
        try:
            return self.start(query, session_id, options, tokens=tokens, wait=False)
        except SessionBusy:
            return None

    def _turn_done(self, turn: BackgroundTurn) -> None:
        with self._running_guard:
            self._running.discard(turn)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until turns started with :meth:`start` have ended; True if they all did."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._running_guard:
                running = list(self._running)
            if not running:
                return True
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not running[0].join(left) and left == 0.0:
                return False

    def _run(
        self,
        graph_input: Any,
        config: dict[str, Any],
        turn: RunningTurn | None = None,
        approve: Approver | None = None,
        *,
        tokens: bool = True,
    ) -> Iterator[StreamItem]:
        while True:
            final = yield from self._stream_graph(graph_input, config, turn, tokens=tokens)
            interrupts = list(final.get("__interrupt__") or ())
            if not interrupts and not final.get("answer"):
                # A compare turn resumed in one branch can still wait in the other.
                thread = _config(config["configurable"]["thread_id"])
                interrupts = list(self.graph.get_state(thread).interrupts)
            waiting = next((i for i in interrupts if approval.is_request(i.value)), None)
            if waiting is None:
                break
            request = waiting.value
            yield ("approval", request)
            if approve is None:
                yield ("final", _awaiting_payload(final, request))
                return
            from langgraph.types import Command

            # Resume at the thread's newest checkpoint (a replay's new branch included).
            graph_input = Command(resume={waiting.id: approve(request)})
            config = _config(config["configurable"]["thread_id"])
        payload = turn_payload(final)
        payload["status"] = "done"
        audit_turn(self.settings, payload)
        yield ("final", payload)

    def _stream_graph(
        self,
        graph_input: Any,
        config: dict[str, Any],
        turn: RunningTurn | None,
        *,
        tokens: bool = True,
    ) -> Generator[StreamItem, None, dict[str, Any]]:
        """Stream one graph run as items; returns (``yield from``) the last state values.

        Without ``tokens``, a one-respondent turn is run without LangGraph's custom stream:
        with it, every step's node runs in a pool thread with a waiter thread beside it, so
        that items can come out mid-step; without it, a one-node step runs in this thread
        (~2.5 ms less per turn, ``bench/overhead.py``). Events then come only in the
        payload's ``event_log``, and the answer is the state's payload once ``publish`` has
        run, handed out before the critic and memory start. (Not from inside ``publish``: the
        step's checkpoint would then come after the answer, and a client reading the
        session's history at once could miss the turn it was just answered.)
        """
        from local2.graph.compare.spec import spec_of

        final: dict[str, Any] = {}
        if turn is not None:  # a Stop raises inside the run, at the next token or step
            config = {**config, "callbacks": [StopSignal(turn)]}
        if tokens:
            modes = ["custom", "messages", "values"]
        else:
            modes = ["custom", "values"] if spec_of(config) else ["updates", "values"]
        published = False  # publish ran in the step whose values come next (updates mode)
        for mode, data in self.graph.stream(graph_input, config, stream_mode=modes):
            if mode == "updates":
                published = published or "publish" in data
            elif mode == "values" and published:
                published = False
                yield ("answer", turn_payload(data))
            if mode == "custom":
                if "event" in data:
                    yield ("event", data["event"])
                if "payload" in data:
                    yield ("answer", data["payload"])
                if "respondent" in data:  # a compare turn: {id, kind, text} of one respondent
                    yield ("respondent", data["respondent"])
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
        return final

    def ask(
        self,
        query: str,
        session_id: str | None = None,
        on_item: Callable[[str, Any], None] | None = None,
        approve: Approver | None = None,
        options: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Run one turn and return its payload (``response.generation``)."""
        payload: dict[str, Any] = {}
        for kind, data in self.stream(query, session_id, approve, options=options):
            if on_item is not None:
                on_item(kind, data)
            if kind == "final":
                payload = data
        return payload

    # -- reading a session -----------------------------------------------------------------

    def state(self, session_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
        """The state at a checkpoint, or at the session's head (never a dead turn's leftover)."""
        if checkpoint_id:
            snapshot = self.graph.get_state(_config(session_id, checkpoint_id))
        else:
            snapshot = self._head(session_id)
        if snapshot is None or not snapshot.values:
            raise UnknownTurn(
                f"No session '{session_id}'"
                + (f" with checkpoint '{checkpoint_id}'" if checkpoint_id else "")
            )
        return dict(snapshot.values)

    def exists(self, session_id: str) -> bool:
        """Whether the session has something to continue from (a turn that settled)."""
        return self._head(session_id) is not None

    def head_id(self, session_id: str) -> str | None:
        """The id of the checkpoint the session continues from (its current branch's end)."""
        head = self._head(session_id)
        return _checkpoint_id(head.config) if head is not None else None

    def history(
        self,
        session_id: str,
        limit: int | None = None,
        *,
        checkpoint_id: str | None = None,
        detail: bool = False,
    ) -> list[dict[str, Any]]:
        """The session's clean turns (user, assistant, query_id), oldest first.

        ``checkpoint_id``: the turns as seen from that checkpoint (another branch).
        ``detail``: also each turn's ``record`` (thinking, tool calls, memory hits, events),
        its critic grade (``critique``) and the person's latest ``rating``.
        """
        state = self.state(session_id, checkpoint_id)
        turns = self.services.turn_log.window(
            state.get("history_head"),
            limit or max(1, state.get("turn_count", 0)),
            records=detail,
        )
        rewards = state.get("rewards") or {}
        notes = self.services.turn_log.notes([t.id for t in turns]) if detail else {}
        rows = []
        for t in turns:
            row = {
                "query_id": t.query_id,
                "user": t.user,
                "assistant": t.assistant,
                "created_at": t.created_at,
                "reward": rewards.get(t.query_id),
            }
            if detail:
                noted = notes.get(t.id, {})
                row.update(
                    record=t.record or {},
                    critique=noted.get("critique"),
                    rating=noted.get("rating") or rewards.get(t.query_id),
                )
            rows.append(row)
        return rows

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
        if not self.services.native_tools:  # its tools were described in its prompt
            from local2.models.prompted_tools import prompted_messages

            schemas = [t.schema() for t in self.services.tools.values()]
            messages = prompted_messages(messages, schemas or None)
        return prompt_as_json(messages)

    def sessions(self, limit: int = 20) -> list[dict[str, Any]]:
        return self.services.turn_log.sessions(limit)

    def checkpoints(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """A session's checkpoints, newest first: id, step, writer, time, next, summary.

        ``current`` says whether a checkpoint is on the branch the session continues from
        (forks leave the original branch listed, with ``current`` false); ``abandoned`` marks
        what a turn that was stopped, failed or was killed part-way left behind.
        """
        snapshots = list(self.graph.get_state_history(_config(session_id), limit=limit))
        if not snapshots:
            raise UnknownTurn(f"No session '{session_id}'")
        by_id = {_checkpoint_id(s.config): s for s in snapshots}
        head = branches.pick_head(snapshots, live=self.turns.running(session_id) is not None)
        on_branch: set[str] = set()
        walk: str | None = _checkpoint_id(head.config) if head is not None else None
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
                    "settled": branches.settled(snap),
                    "summary": _summary(snap, writer),
                }
            )
        dead = branches.abandoned(rows, on_branch)
        for row in rows:
            row["abandoned"] = row["checkpoint_id"] in dead
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
        approve: Approver | None = None,
    ) -> dict[str, Any]:
        """Re-run from a past checkpoint as a new branch; the original stays intact.

        Without ``query`` the run resumes exactly at that checkpoint (the nodes after it run
        again, model calls included). With ``query`` the turn that checkpoint belongs to is
        asked again with the new question, on the same history; from a checkpoint that ends
        a turn, a new turn is asked on top of it. With ``model`` another model answers.
        Returns the new turn's payload plus ``branch`` (the new checkpoint ids, newest
        first), ``replayed_from`` and ``original`` (``{query_id, query, answer}`` of the turn
        the original branch answered from there, or None). The session then continues from
        the new branch; the original's checkpoints stay listed and replayable. A tool call
        that needs the person is put to ``approve``; without one the replay pauses like a
        turn (``status: awaiting_approval``), and :meth:`resume` goes on.
        """
        payload: dict[str, Any] = {}
        for kind, data in self.replay_stream(session_id, checkpoint_id, query, model, approve):
            if kind == "final":
                payload = data
        return payload

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
        agent = self if model is None else self.with_model(model)
        config = _config(session_id, checkpoint_id)
        snapshot = agent.graph.get_state(config)
        if not snapshot.values and not snapshot.next:
            raise UnknownTurn(f"No checkpoint '{checkpoint_id}' in session '{session_id}'")
        if query is not None:
            problem = validate_query(query, self.settings.generator.max_query_chars)
            if problem:
                raise InvalidQuery(problem)

        def produce(turn: RunningTurn) -> Iterator[StreamItem]:
            original = self._original_turn(session_id, snapshot)
            graph_input, run_config = agent._fork_point(snapshot, query)
            stop = {checkpoint_id, _checkpoint_id(run_config) or checkpoint_id}
            if graph_input is None:  # resumed part-way: the replayed turn's own clock
                run_config, started = agent._restart_clock(snapshot)
                yield ("event", started)
            for kind, data in agent._run(graph_input, run_config, turn, approve):
                if kind == "final":
                    data = {
                        **data,
                        "branch": self._branch_since(session_id, stop),
                        "replayed_from": checkpoint_id,
                        "original": original,
                    }
                yield kind, data

        yield from self.turns.run(session_id, produce)

    def _restart_clock(self, snapshot: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new checkpoint beside ``snapshot`` whose turn starts now, with a fresh event log."""
        from local2.graph.nodes.common import event

        now = time.time()
        started = event(
            {"started_at": now},
            events.REPLAY_STARTED,
            from_checkpoint=_checkpoint_id(snapshot.config),
            query_id=(snapshot.values or {}).get("query_id"),
        )
        writer = self._writer(snapshot, {})
        config = self.graph.update_state(
            snapshot.config,
            {"started_at": now, "event_log": [RESET, started]},
            as_node=writer if writer in self.graph.nodes else None,
        )
        return config, started

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
        if not branches.AFTER_PUBLISH & set(snapshot.next):  # not yet published here
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
        server (Ollama unless this agent talks to an OpenAI-compatible one; an Ollama model
        must be pulled: it is never silently replaced)."""
        from local2.models.backend import make_chat_model

        kind = "openai" if self.services.backend == "openai" else "ollama"
        chosen = make_chat_model(self.settings, kind, model)
        other = Agent(
            self.settings,
            chat_model=chosen.model,
            backend=chosen.backend,
            model=chosen.name,
            native_tools=chosen.native_tools,
            tools=list(self.services.tools.values()),
            memory=self.services.memory,
            critic=self.services.critic,
            checkpointer=self.checkpointer,
            turn_log=self.services.turn_log,
        )
        other.turns = self.turns  # one turn at a time per session, whichever model answers
        return other

    # -- ratings ---------------------------------------------------------------------------

    def feedback(
        self, session_id: str, query_id: str, rating: int, comment: str | None = None
    ) -> dict[str, Any]:
        """Record a person's 1-5 rating of a turn: ``user.feedback`` then ``reward.event``.

        One rating per answer: the same rating again records nothing (``unchanged``); another
        one replaces it (``previous`` says what it was). Waits for a running turn of the
        session, so the rating lands on the session's head, never inside a turn.
        ``engrams_annotated`` counts the turn's engrams given the rating; None when memory is
        not open in this process: the rating then waits and is applied when it next opens
        (:mod:`local2.memory.deferred`).
        """
        if not isinstance(rating, int) or not 1 <= rating <= 5:
            raise ValueError(f"A rating is a whole number from 1 to 5, got {rating!r}.")
        with self._session_lock(session_id):
            head = self._head(session_id)
            if head is None:
                raise UnknownTurn(f"No session '{session_id}'")
            turn = self.services.turn_log.find(session_id, query_id)
            if turn is None:
                raise UnknownTurn(f"No turn '{query_id}' in session '{session_id}'")
            before = self._rating_of(head.values, turn.id, query_id)
            result = {"session_id": session_id, "query_id": query_id, "rating": rating}
            if (
                before is not None
                and before.get("rating") == rating
                and (comment is None or before.get("comment") == comment)
            ):
                return {**result, "unchanged": True, "engrams_annotated": 0, "events": []}
            previous = before.get("rating") if before else None
            given, reward = self._record_rating(
                head.config, turn.id, query_id, rating, comment, previous
            )
        from local2.memory import deferred

        # Memory not open here (`local2 feedback`), or down: the annotation waits for the
        # next process that opens it, and ``engrams_annotated`` is None.
        annotated = deferred.annotate(
            self.services.memory, self.settings, query_id, reward=float(rating)
        )
        return {
            **result,
            "previous": previous,
            "engrams_annotated": annotated,
            "events": [given, reward],
        }

    def _rating_of(self, values: dict[str, Any], turn_id: str, query_id: str) -> dict | None:
        """The rating a turn has now: its note, else the one in the session's state."""
        noted = self.services.turn_log.notes([turn_id]).get(turn_id, {}).get("rating")
        return noted or (values.get("rewards") or {}).get(query_id)

    def _record_rating(
        self,
        head_config: dict[str, Any],
        turn_id: str,
        query_id: str,
        rating: int,
        comment: str | None,
        previous: int | None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Write the rating once: the two events and the reward on the head, a note on the turn."""
        from local2.graph.nodes.common import event

        now = time.time()
        base = {"started_at": now}
        session_id = head_config["configurable"]["thread_id"]
        given = event(
            base,
            events.USER_FEEDBACK,
            session_id=session_id,
            query_id=query_id,
            rating=rating,
            comment=comment,
            replaces=previous,
        )
        reward = event(
            base, events.REWARD_EVENT, session_id=session_id, query_id=query_id, reward=rating
        )
        entry = {"rating": rating, "comment": comment, "at": now}
        self.graph.update_state(
            head_config,
            {"rewards": {query_id: entry}, "event_log": [given, reward]},
            as_node="ingest",
        )
        self.services.turn_log.note(turn_id, "rating", entry)
        return given, reward

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Let turns still running (a critic grading) finish, then release everything."""
        if not self.wait_idle(wait_s):
            log.warning("closing with turns still running after %.0fs", wait_s)
        self.services.runner.shutdown()
        self._ahead.shutdown(wait=True)
        if self.services.memory is not None and hasattr(self.services.memory, "close"):
            self.services.memory.close()
        if self.services.votes is not None:
            self.services.votes.close()
        self.storage.close()
