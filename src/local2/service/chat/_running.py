"""Turns in flight: one at a time per session, each run in a worker the person can stop.

A turn runs its graph in a worker thread and hands its stream items to a sink
(:meth:`Turns.launch`): the caller's queue (:meth:`Turns.run`), or a
:class:`~local2.service.chat.BackgroundTurn` that any thread or event loop reads. A reader
waiting on the queue honours a Stop at once, even while the model has not sent a token yet. The
worker itself stops at the next token, node or tool boundary (:class:`StopSignal` raises
:class:`TurnCancelled` there), which also closes the model's HTTP stream. Before its answer
is published such a turn records nothing a session continues from (see
:mod:`local2.graph.branches`); once published, a Stop no longer applies and the critic and memory
finish their work.

The session's lock is held from the start of a turn until its worker has ended, so the next
turn of that session waits for a stopped one to wind down and never interleaves with it.

Once the answer is out, the worker holds the graph until the answer has been handed over
(``RunningTurn.handed_over``, at most :data:`HANDOVER_WAIT_S`): the critic and memory, which
start as soon as the graph goes on, would otherwise share the CPU with the answer on its way
to the person (~5 ms of a ``POST /query``, ``bench/overhead.py``).

The person first (``critic.yield_to_new_turns``, on by default): when the next turn of a
session asks for its lock while the last one still runs, that turn is asked to give way
(``RunningTurn.give_way``): once its answer is out, its critic's request is cancelled and the
grade owed (:mod:`local2.graph._after`), memory keeps what it has, and the run ends in
milliseconds. Other processes sharing the store are told too (``SharedLocks.announce``).
Whatever else waits for a session to be quiet (:mod:`local2.service.chat._late_grades`) hears when a
turn starts (``on_turn_start``) and when its lock is released (``on_idle``).

The graph's run (:class:`GraphRuns`): one run of the chat graph, as stream items, LangGraph's
streams in, ``(kind, data)`` out.

A turn, a resumed approval and a replay all run the graph the same way: events, thinking and
answer tokens as they happen, the payload at publish (``answer``), and at the end the payload
(``final``) with its ``status``. A tool call waiting for the person pauses the run
(LangGraph ``interrupt``): the request is put to ``approve`` and the run goes on, or, with no
one to ask, the payload says ``awaiting_approval``. Every finished turn is written to the
audit log (:mod:`local2.storage._audit_log`). A run that ends owing grades (a critic that gave
way to the next question: ``pending_grades``) hands them to ``owe``
(:mod:`local2.service.chat._late_grades`).
"""

from __future__ import annotations

import queue
import threading
from collections import defaultdict
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Durability, StateSnapshot, StreamMode

from local2.config import Settings
from local2.contracts import (
    ApprovalRequest,
    Approver,
    PendingApproval,
    PendingGrade,
    StreamItem,
    TurnPayload,
    approval,
)
from local2.errors import SessionBusy, TurnCancelled
from local2.graph import Services, TurnContext, TurnGraph, turn_payload
from local2.ids import check_session_id
from local2.models import Cancellation
from local2.storage import SharedLocks, audit_turn, raise_if_full

POLL_S = 0.1  # how often a waiting caller looks for a Stop
HANDOVER_WAIT_S = 0.1  # the longest the critic and memory wait for the answer to be taken
_DONE: Any = ("__done__", None)  # compared by identity


@dataclass
class RunningTurn:
    """One turn in flight: whether a Stop was asked for and whether the answer is out."""

    session_id: str
    stop_requested: threading.Event = field(default_factory=threading.Event)
    published: bool = False
    # Set once the answer has reached whoever waits for it; the turn then goes on.
    handed_over: threading.Event = field(default_factory=threading.Event)
    # Set when the session's next question comes while the critic and memory still work.
    give_way: Cancellation = field(default_factory=Cancellation)
    # Set once its memory is written (or the turn has ended): the next question may recall.
    remembered: threading.Event = field(default_factory=threading.Event)

    @property
    def stopping(self) -> bool:
        """A Stop applies until the answer is published; after that the turn completes."""
        return self.stop_requested.is_set() and not self.published


class StopSignal(BaseCallbackHandler):
    """Raises :class:`TurnCancelled` inside the graph run once its turn is stopping."""

    raise_error = True
    run_inline = True

    def __init__(self, turn: RunningTurn) -> None:
        self.turn = turn

    def _check(self, *args: Any, **kwargs: Any) -> None:
        if self.turn.stopping:
            raise TurnCancelled(f"turn of session {self.turn.session_id} stopped")

    on_llm_new_token = _check
    on_chat_model_start = _check
    on_llm_start = _check
    on_chain_start = _check
    on_tool_start = _check


SessionHook = Callable[[str], None]
GRADING = "grading:"  # the shared lock on a session's owed grades (ids cannot hold a colon)


class Turns:
    """The turns running in this process, one lock per session.

    ``yield_to_new_turns``: a session's next question makes the last turn's background work
    give way (see the module docstring); False: it waits for it, as it always did."""

    def __init__(self, shared: SharedLocks | None = None, yield_to_new_turns: bool = True) -> None:
        self._shared = shared or SharedLocks()  # other processes' view of the session lock
        self._locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
        self._running: dict[str, RunningTurn] = {}
        self._guard = threading.Lock()
        self.yield_to_new_turns = yield_to_new_turns
        self.on_turn_start: list[SessionHook] = []  # a turn of the session is about to start
        self.on_idle: list[SessionHook] = []  # a turn of the session has ended, its lock free
        if yield_to_new_turns:
            self._shared.listen(self._started_elsewhere)

    @property
    def remote(self) -> bool:
        """Whether taking a session's lock is a round trip to a server (Postgres)."""
        return self._shared.remote

    def lock(self, session_id: str) -> threading.Lock:
        """The lock held while a turn of ``session_id`` runs (ratings wait for it too)."""
        with self._guard:
            return self._locks[session_id]

    def make_way(self, session_id: str) -> None:
        """A turn of ``session_id`` is about to start, here: the last one's background work,
        and whatever waits for the session to be quiet, give way (in every process)."""
        if not self.yield_to_new_turns:
            return
        self._started_elsewhere(session_id)
        self._shared.announce(session_id)

    def _started_elsewhere(self, session_id: str) -> None:
        """A turn of ``session_id`` is about to start (here, or in another process). The one
        running gives way once its answer is out (asked now, even while it still answers:
        the critic and memory read it only after ``publish``)."""
        turn = self.running(session_id)
        if turn is not None:
            turn.give_way.set()
        for hook in self.on_turn_start:
            hook(session_id)

    def _acquire(self, session_id: str, wait: bool) -> threading.Lock:
        """A turn's: the last turn's background work gives way first (:meth:`make_way`), then
        the session's locks (:meth:`_take`)."""
        self.make_way(session_id)
        return self._take(session_id, wait)

    def _take(self, session_id: str, wait: bool) -> threading.Lock:
        """This process's lock, then the one other processes see; SessionBusy if not waiting."""
        lock = self.lock(session_id)
        if not lock.acquire(blocking=wait):
            raise SessionBusy(f"A turn of session '{session_id}' is still running.")
        try:
            if not self._shared.acquire(session_id, blocking=wait):
                raise SessionBusy(f"A turn of session '{session_id}' is running elsewhere.")
        except BaseException:
            lock.release()
            raise
        return lock

    def _release(self, session_id: str, lock: threading.Lock) -> None:
        try:
            self._shared.release(session_id)
        finally:
            lock.release()

    @contextmanager
    def hold(self, session_id: str, *, wait: bool = True) -> Iterator[None]:
        """Wait for the session's running turn (in any process) and keep the next one out;
        ``wait`` false: :class:`SessionBusy` at once if one runs. (Not a turn: nothing gives
        way to it.)"""
        lock = self._take(session_id, wait)
        try:
            yield
        finally:
            self._release(session_id, lock)

    def busy_elsewhere(self, session_id: str) -> bool:
        """Whether another process runs a turn of the session now (a round trip on Postgres)."""
        return self._shared.held_elsewhere(session_id)

    def claim_grading(self, session_id: str) -> bool:
        """Claim the session's owed grades for this process, so that two processes that
        both know what it owes do not both ask the judge (False: another one grades)."""
        return self._shared.acquire(GRADING + session_id, blocking=False)

    def release_grading(self, session_id: str) -> None:
        self._shared.release(GRADING + session_id)

    def running(self, session_id: str) -> RunningTurn | None:
        with self._guard:
            return self._running.get(session_id)

    def stop(self, session_id: str) -> bool:
        """Ask the running turn of ``session_id`` to stop; False when none can be stopped."""
        turn = self.running(session_id)
        if turn is None or turn.published:
            return False
        turn.stop_requested.set()
        return True

    def launch(
        self,
        session_id: str,
        produce: Callable[[RunningTurn], Iterator[StreamItem]],
        sink: Callable[[StreamItem], None],
        ended: Callable[[BaseException | None], None],
        *,
        wait: bool = True,
        handed_over: threading.Event | None = None,
    ) -> RunningTurn:
        """Run ``produce(turn)`` in a worker thread under the session's lock.

        Each item goes to ``sink`` as it comes; after the answer the worker waits for it to
        be handed over. Once the worker has ended and the lock is released, ``ended`` gets
        the exception the turn raised, or None. The caller waits here for a
        turn of the same session already running, or gets :class:`SessionBusy` when
        ``wait`` is false.
        """
        lock = self._acquire(session_id, wait)
        turn = RunningTurn(session_id)
        if handed_over is not None:
            turn.handed_over = handed_over
        with self._guard:
            self._running[session_id] = turn

        def work() -> None:
            failure: BaseException | None = None
            try:
                for item in produce(turn):
                    answer = item[0] == "answer"
                    if answer:
                        turn.published = True
                    sink(item)
                    if answer:  # the graph goes on (critic, memory) once the answer is out
                        turn.handed_over.wait(HANDOVER_WAIT_S)
            except BaseException as exc:  # handed to the caller, which re-raises it
                failure = exc
            finally:
                turn.remembered.set()
                with self._guard:
                    self._running.pop(session_id, None)
                self._release(session_id, lock)
            ended(failure)
            for hook in self.on_idle:
                hook(session_id)

        worker = threading.Thread(target=work, name=f"turn-{session_id[:12]}", daemon=True)
        try:
            worker.start()
        except BaseException:
            with self._guard:
                self._running.pop(session_id, None)
            self._release(session_id, lock)
            raise
        return turn

    def run(
        self,
        session_id: str,
        produce: Callable[[RunningTurn], Iterator[StreamItem]],
        *,
        wait: bool = True,
        handed_over: threading.Event | None = None,
    ) -> Iterator[StreamItem]:
        """Run ``produce(turn)`` in a worker under the session's lock; yield its items.

        Raises :class:`TurnCancelled` when the turn is stopped before its answer, and
        :class:`SessionBusy` when ``wait`` is false and the session already has a turn. A
        caller that stops reading early (closes this generator) stops the turn the same way.
        The answer counts as handed over when it is yielded here, unless the caller passes
        ``handed_over`` and sets it itself.
        """
        items: queue.SimpleQueue[Any] = queue.SimpleQueue()  # items, then the end or an error

        def ended(failure: BaseException | None) -> None:
            items.put(_DONE if failure is None else ("__error__", failure))

        own_handover = handed_over is None
        turn = self.launch(
            session_id, produce, items.put, ended, wait=wait, handed_over=handed_over
        )
        finished = False
        try:
            while True:
                try:
                    item = items.get(timeout=POLL_S)
                except queue.Empty:
                    if turn.stopping:
                        raise TurnCancelled(f"turn of session {session_id} stopped") from None
                    continue
                if item is _DONE:
                    finished = True
                    return
                if item[0] == "__error__":
                    finished = True
                    raise item[1]
                if turn.stopping:
                    raise TurnCancelled(f"turn of session {session_id} stopped")
                if own_handover and item[0] == "answer":
                    turn.handed_over.set()
                yield item
        finally:
            if own_handover:
                turn.handed_over.set()  # no one to wait for any more
            if not finished:  # stopped, or the caller went away: the worker stops too
                turn.stop_requested.set()


def thread_config(session_id: str, checkpoint_id: str | None = None) -> RunnableConfig:
    """The thread config of a session; an id breaking the rule raises :class:`InvalidId`.
    Where a request comes in, its session id is checked once: here, or in
    :meth:`~local2.service.chat.TurnRunner.check` for a turn, whose run then uses
    :func:`thread_of`."""
    return thread_of(check_session_id(session_id), checkpoint_id)


def thread_of(session_id: str, checkpoint_id: str | None = None) -> RunnableConfig:
    """:func:`thread_config` for an id this request has checked already."""
    configurable: dict[str, str] = {"thread_id": session_id, "checkpoint_ns": ""}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def pending_in(snapshot: StateSnapshot) -> PendingApproval | None:
    """The approval request a checkpoint waits on, or None."""
    for waiting in snapshot.interrupts:
        if approval.is_request(waiting.value):
            request: ApprovalRequest = waiting.value  # as the approve node made it
            return {**request, "interrupt_id": waiting.id}
    return None


def awaiting_payload(final: Mapping[str, Any], request: ApprovalRequest) -> TurnPayload:
    """The payload of a turn paused for approval: what it did so far, and what waits."""
    payload = turn_payload(final)
    asked = list(request.get("events") or [])
    payload["event_log"] = [*payload["event_log"], *asked]
    payload["events"] = [*payload["events"], *(e["subject"] for e in asked)]
    payload["status"] = "awaiting_approval"
    payload["approval"] = {"calls": request.get("calls") or [], "resume": request.get("resume")}
    return payload


# Each step's checkpoint is saved before the next step starts, so the answer, handed out at
# the step after ``publish``, never reaches the person before the checkpoint that records it:
# with LangGraph's default ("async") a history read sent at once missed the turn just
# answered in 55-85 % of reads on Postgres and 9-22 % on SQLite, and a new session's read
# answered 404. (LangGraph emits a step's values before it saves the step, and hands them out
# at the start of the next step, after waiting for the save when "sync".)
DURABILITY: Durability = "sync"


Owe = Callable[[str, dict[str, PendingGrade]], None]
Done = Callable[[Mapping[str, Any]], None]  # a finished turn's state


class GraphRuns:
    """Runs ``graph`` and hands out its stream as items; the grades a run ends owing go to
    ``owe(session_id, pending)``."""

    def __init__(
        self,
        graph: TurnGraph,
        settings: Settings,
        services: Services,
        owe: Owe | None = None,
        *,
        yielding: bool = False,
        done: Done | None = None,
    ) -> None:
        self.graph = graph
        self.settings = settings
        self.plain = TurnContext(services)  # a run that asks for nothing: replays, resumes
        self.owe = owe
        self.yielding = yielding  # a turn's critic gives way to the session's next question
        self.done = done  # told of each finished turn's state (the library's citations)

    def run(
        self,
        graph_input: Any,
        config: RunnableConfig,
        turn: RunningTurn | None = None,
        approve: Approver | None = None,
        *,
        context: TurnContext | None = None,
        tokens: bool = True,
    ) -> Iterator[StreamItem]:
        """The run's items, ending with ``final``; a Stop of ``turn`` raises inside it. A
        store out of room raises :class:`~local2.errors.StorageFull` (nothing is recorded).
        ``context``: what the turn asked for (default: nothing, on this graph's services);
        passed again when the run resumes after an approval (LangGraph keeps no context).
        The critic of a ``turn`` (a turn, a resumed one, a replay) gives way to the session's
        next question when ``yielding``, and its memory says when it is written."""
        context = context or self.plain
        if turn is not None:  # the session's next turn may follow it closely
            context = replace(
                context,
                give_way=context.give_way or (turn.give_way if self.yielding else None),
                memory_written=turn.remembered.set,
            )
        try:
            yield from self._run(graph_input, config, turn, approve, context, tokens=tokens)
        except Exception as exc:
            raise_if_full(exc, self.settings)
            raise

    def _run(
        self,
        graph_input: Any,
        config: RunnableConfig,
        turn: RunningTurn | None,
        approve: Approver | None,
        context: TurnContext,
        *,
        tokens: bool,
    ) -> Iterator[StreamItem]:
        while True:
            final = yield from self._stream(graph_input, config, turn, context, tokens=tokens)
            interrupts = list(final.get("__interrupt__") or ())
            if not interrupts and not final.get("answer"):
                # A compare turn resumed in one branch can still wait in the other.
                thread = thread_of(config["configurable"]["thread_id"])
                interrupts = list(self.graph.get_state(thread).interrupts)
            waiting = next((i for i in interrupts if approval.is_request(i.value)), None)
            if waiting is None:
                break
            request = waiting.value
            yield ("approval", request)
            if approve is None:
                yield ("final", awaiting_payload(final, request))
                return
            # Resume at the thread's newest checkpoint (a replay's new branch included).
            graph_input = Command(resume={waiting.id: approve(request)})
            config = thread_of(config["configurable"]["thread_id"])
        payload = turn_payload(final)
        payload["status"] = "done"
        audit_turn(self.settings, {**payload, "owner": final.get("owner")})  # whose turn
        if self.done is not None:
            self.done(final)
        if self.owe is not None and final.get("pending_grades"):
            self.owe(config["configurable"]["thread_id"], dict(final["pending_grades"]))
        yield ("final", payload)

    def _stream(
        self,
        graph_input: Any,
        config: RunnableConfig,
        turn: RunningTurn | None,
        context: TurnContext,
        *,
        tokens: bool = True,
    ) -> Generator[StreamItem, None, dict[str, Any]]:  # LangGraph's values (see below)
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
        final: dict[str, Any] = {}  # the state's values, and LangGraph's __interrupt__
        if turn is not None:  # a Stop raises inside the run, at the next token or step
            config = {**config, "callbacks": [StopSignal(turn)]}
        modes: list[StreamMode]
        if tokens:
            modes = ["custom", "messages", "values"]
        else:
            modes = ["custom", "values"] if context.compare else ["updates", "values"]
        published = False  # publish ran in the step whose values come next (updates mode)
        stream = self.graph.stream(
            graph_input, config, context=context, stream_mode=modes, durability=DURABILITY
        )
        for part in stream:  # (mode, data): several modes were asked for
            mode, data = cast(tuple[StreamMode, Any], part)
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
