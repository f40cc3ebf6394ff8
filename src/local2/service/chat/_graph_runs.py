"""One run of the chat graph, as stream items: LangGraph's streams in, ``(kind, data)`` out.

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

from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import replace
from typing import Any, cast

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
from local2.graph import Services, TurnContext, TurnGraph, turn_payload
from local2.ids import check_session_id
from local2.service.chat._running import RunningTurn, StopSignal
from local2.storage import audit_turn, raise_if_full


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
