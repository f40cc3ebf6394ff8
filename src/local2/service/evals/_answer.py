"""Answering one question of an eval run: as a chat turn (``ask``) or a research run
(``research``), with what reached the model, the tools called, the tokens and the time.

Each question is its own new session (or research run), so questions asked side by side
never share a conversation, and its id opens in time travel (or the Research tab). A
question's session is set aside before its turn (``TurnLog.set_aside``; a research run:
``RunIndex.set_aside``): it stays out of the person's list of conversations (of research
runs), reached through the run's results instead. A Stop
(:meth:`Answerer.stop`) ends the questions in flight before their answer: they raise
:class:`~local2.errors.TurnCancelled` and are asked again when the run resumes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from local2.contracts import Person, TokenCounts, collect_turn, nobody
from local2.errors import TurnCancelled
from local2.evals import Question, Reached, reached_from_turn
from local2.ids import new_run_id, new_session_id

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from local2.contracts import Approver, ResearchPayload, StreamItem
    from local2.service.research import Research


class TurnService(Protocol):
    """What answering in ask mode needs of an agent's turns (``agent.turns``:
    :class:`~local2.service.chat.TurnRunner`)."""

    def stream(
        self,
        query: str,
        session_id: str | None = None,
        approve: Approver | None = None,
        *,
        tokens: bool = True,
        person: Person = ...,
    ) -> Iterator[StreamItem]: ...

    def stop(self, session_id: str) -> bool: ...


@dataclass(frozen=True)
class Asked:
    """What answering one question gave: the answer, every text the model was given, the
    tools called in order, its session (or research run), tokens and seconds."""

    answer: str
    reached: list[Reached]
    tools: list[str]
    session_id: str
    tokens: TokenCounts | None
    time_s: float


class UsageMeter(BaseCallbackHandler):
    """Adds up the answering model's tokens per session: each model call inside a graph run
    carries its thread id (the session, or the research run) in its metadata. Calls from
    outside a graph (the grader's) carry none and are not counted."""

    run_inline = True

    def __init__(self) -> None:
        self._threads: dict[UUID, str] = {}
        self._tokens: dict[str, TokenCounts] = {}
        self._guard = threading.Lock()

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],  # LangChain's callback interface, as it calls us
        messages: list[list[Any]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,  # the run's metadata, LangChain's
        **kwargs: Any,
    ) -> None:
        thread = (metadata or {}).get("thread_id")
        if isinstance(thread, str):
            with self._guard:
                self._threads[run_id] = thread

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        with self._guard:
            thread = self._threads.pop(run_id, None)
        if thread is None:
            return
        prompt = completion = 0
        for generations in response.generations:
            for generation in generations:
                usage = getattr(getattr(generation, "message", None), "usage_metadata", None)
                if usage:
                    prompt += int(usage.get("input_tokens") or 0)
                    completion += int(usage.get("output_tokens") or 0)
        if prompt or completion:
            with self._guard:
                seen = self._tokens.setdefault(thread, TokenCounts(prompt=0, completion=0))
                seen["prompt"] += prompt
                seen["completion"] += completion

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._guard:
            self._threads.pop(run_id, None)

    def take(self, thread: str) -> TokenCounts | None:
        """The session's tokens so far (None: the model reported none), forgotten here."""
        with self._guard:
            return self._tokens.pop(thread, None)

    def attach(self, chat_model: BaseChatModel) -> None:
        """Count ``chat_model``'s calls (the run's own model; a model shared with others, as a
        test's may be, counts only calls from graph runs, by their thread)."""
        known = chat_model.callbacks
        handlers = list(known) if isinstance(known, list) else []
        chat_model.callbacks = [*handlers, self]

    def detach(self, chat_model: BaseChatModel) -> None:
        known = chat_model.callbacks
        if isinstance(known, list):
            chat_model.callbacks = [h for h in known if h is not self] or None


def document_texts(hits: Iterable[Any]) -> list[str]:
    """The texts of a turn's document hits, whatever shape each has (a text, or a record
    with its ``text``, ``content`` or ``passage``)."""
    texts = []
    for hit in hits:
        if isinstance(hit, str):
            texts.append(hit)
        elif isinstance(hit, Mapping):
            text = hit.get("text") or hit.get("content") or hit.get("passage") or ""
            texts.append(str(text))
    return [t for t in texts if t]


class Answerer(Protocol):
    """Answers questions, several at once, and stops the ones in flight."""

    def __call__(self, question: Question) -> Asked: ...

    def stop(self) -> None: ...


@dataclass(eq=False)
class InFlight:
    """The sessions (or runs) being answered, and whether a Stop came."""

    stopped: threading.Event = field(default_factory=threading.Event)
    sessions: set[str] = field(default_factory=set)
    guard: threading.Lock = field(default_factory=threading.Lock)

    def begin(self, session_id: str) -> None:
        with self.guard:
            if self.stopped.is_set():
                raise TurnCancelled("the eval run was stopped")
            self.sessions.add(session_id)

    def end(self, session_id: str) -> None:
        with self.guard:
            self.sessions.discard(session_id)

    def stop(self) -> list[str]:
        """Mark the Stop; the sessions in flight."""
        with self.guard:
            self.stopped.set()
            return list(self.sessions)


@dataclass(eq=False)
class Asking:
    """What both answerers keep of their run: whom they ask for (``person``), the tokens'
    meter, how a question's session (or research run) is set aside from the person's own,
    and the ones in flight."""

    person: Person
    meter: UsageMeter
    set_aside: Callable[[str], None]
    flight: InFlight = field(default_factory=InFlight)

    def begin(self, answer_id: str) -> float:
        """Set ``answer_id`` (a session, a research run) aside and in flight; returns when
        its answering started (``time.monotonic``)."""
        self.set_aside(answer_id)
        self.flight.begin(answer_id)
        return time.monotonic()

    def asked(
        self, answer_id: str, started: float, answer: str, reached: list[Reached], tools: list[str]
    ) -> Asked:
        """What answering in ``answer_id`` gave, with its tokens and seconds."""
        return Asked(
            answer=answer,
            reached=reached,
            tools=tools,
            session_id=answer_id,
            tokens=self.meter.take(answer_id),
            time_s=time.monotonic() - started,
        )


@dataclass(eq=False)
class AskAnswerer:
    """Each question a chat turn of the person's in a new session of the agent, set aside
    from their conversations: tool calls a person would have to approve are denied (nobody
    is there to answer). ``turns`` are the agent's."""

    turns: TurnService
    asking: Asking

    def __call__(self, question: Question) -> Asked:
        session_id = new_session_id()
        started = self.asking.begin(session_id)
        try:
            turn = self.turns.stream(
                question.question, session_id, nobody, tokens=False, person=self.asking.person
            )
            payload = collect_turn(turn)
        finally:
            self.asking.flight.end(session_id)
        reached = reached_from_turn(
            payload.get("tool_calls") or [],
            payload.get("memory_hits") or [],
            document_texts(cast(Mapping[str, Any], payload).get("document_hits") or []),
        )
        answer = str(payload.get("answer") or "")
        tools = [str(c.get("tool")) for c in payload.get("tool_calls") or []]
        return self.asking.asked(session_id, started, answer, reached, tools)

    def stop(self) -> None:
        for session_id in self.asking.flight.stop():
            self.turns.stop(session_id)


@dataclass(eq=False)
class ResearchAnswerer:
    """Each question a research run of the person's, set aside from their list of runs;
    what reached the model is the run's ledger (every search hit and page it found or
    read), its answer the report."""

    research: Research
    asking: Asking

    def __call__(self, question: Question) -> Asked:
        run_id = new_run_id()
        started = self.asking.begin(run_id)
        payload: ResearchPayload | None = None
        items = self.research.stream(question.question, run_id=run_id, person=self.asking.person)
        try:
            for kind, data in items:
                if self.asking.flight.stopped.is_set():
                    raise TurnCancelled(f"research run {run_id} stopped")
                if kind == "final":
                    payload = data
        finally:
            if isinstance(items, Generator):
                items.close()  # a Stop: the run ends here, resumable like any other
            self.asking.flight.end(run_id)
        values = self.research.graph.get_state(
            {"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}
        ).values
        ledger = (values or {}).get("ledger") or []
        reached = [Reached(f"research:{s.get('kind')}", str(s.get("text") or "")) for s in ledger]
        steps = (payload.get("steps") or []) if payload else []
        answer = str((payload.get("report") if payload else None) or "")
        tools = [str(s["tool"]) for s in steps if s.get("tool")]
        return self.asking.asked(run_id, started, answer, reached, tools)

    def stop(self) -> None:
        self.asking.flight.stop()  # each run ends at its next step
