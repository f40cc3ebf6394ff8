"""Running turns: start one, stream it, stop it, wait for the ones still finishing.

One turn at a time per session (:class:`~local2.service.chat.Turns`, in this process and in
every process sharing the store). A turn streams events, thinking and answer tokens as they
happen (:mod:`local2.service.chat._running`); a turn started in the background
(:meth:`TurnRunner.start`) runs to its end whoever reads it, so the critic and memory finish
after the answer has gone. The person first: the session's next question makes them give
way, and a grade owed that way is given once the session is quiet
(:mod:`local2.service.chat._late_grades`; :meth:`TurnRunner.graded` waits for it).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from anyio import to_thread

from local2.config import Settings
from local2.contracts import (
    LOCAL,
    NO_OPTIONS,
    Approver,
    CompareSpec,
    MemoryHit,
    Person,
    StreamItem,
    TurnOptions,
    TurnPayload,
    collect_turn,
)
from local2.errors import AwaitingApproval, InvalidQuery, SessionBusy
from local2.graph import (
    RecallAhead,
    Services,
    TurnContext,
    TurnGraph,
    TurnState,
    compare_spec,
    recall_ahead,
    validate_query,
)
from local2.ids import CheckedId, check_session_id, new_session_id
from local2.library import ReadingLibrary
from local2.service.access import Access
from local2.service.chat._background import BackgroundTurn
from local2.service.chat._late_grades import LateGrades, with_late_grade
from local2.service.chat._running import GraphRuns, RunningTurn, Turns, pending_in, thread_of
from local2.service.chat._sessions import SessionReader
from local2.tools import Scope, Tool, parse_sources, sourced_tools

Produce = Callable[[RunningTurn], Iterator[StreamItem]]
MEMORY_WAIT_S = 5.0  # the longest a next question's recall waits for the last turn's memory


def turn_options(
    model_b: str | None = None,
    temperature_b: float | None = None,
    *,
    compare: bool | None = None,
    default: CompareSpec | None = None,
    sources: str | Sequence[str] | None = None,
) -> TurnOptions:
    """A turn's options: the one way every surface builds them (``agent.turns.options`` adds
    the server's default). ``compare``: True, a second respondent answers (the same model
    again when neither value is given); False, none; None, one when ``model_b`` or
    ``temperature_b`` is given, else ``default`` (``serve --model-b``). ``sources``: where
    the turn's ``web_search`` looks (``web,arxiv``, or a list; none: ``web.search.sources``).
    A value that cannot be used (an unknown source: the known ones are listed) raises
    :class:`~local2.errors.InvalidInput` saying what to give instead."""
    names = parse_sources(sources) if sources else ()
    spec = compare_spec(model_b, temperature_b)
    if compare is False:
        spec = None
    elif spec is None and compare is None:
        spec = default
    elif spec is None and compare:
        spec = {"model": None, "temperature": None}
    return TurnOptions(compare=spec, sources=names) if spec or names else NO_OPTIONS


class ChatSources:
    """The tools of a chat turn told where its ``web_search`` looks: the same sourced search
    as research's (:func:`local2.tools.sourced_tools`, no scope), made once per choice of
    sources and kept, so each scholarly API's pause between calls holds across turns. Only
    ``web_search`` changes (no ``search_<source>`` tool is added to a turn's tools), and it
    keeps ``web.search.max_results``; a turn with no ``web_search`` (tools off) is left as
    it is."""

    def __init__(self, settings: Settings, services: Services) -> None:
        self.settings, self.services = settings, services
        self._made: dict[tuple[str, ...], dict[str, Tool]] = {}
        self._guard = threading.Lock()

    def names(self, asked: Sequence[str]) -> tuple[str, ...]:
        """The sources a turn searches: those it asked for, else ``web.search.sources``."""
        return tuple(asked) or tuple(self.settings.web.search.sources)

    def services_for(self, asked: Sequence[str]) -> Services:
        names = self.names(asked)
        if names == ("web",) or "web_search" not in self.services.tools:
            return self.services
        with self._guard:
            tools = self._made.get(names)
            if tools is None:
                settings, services = self.settings, self.services
                tools = sourced_tools(
                    services.tools,
                    settings,
                    services.backend,
                    ReadingLibrary.shared(settings),
                    names,
                    Scope(),
                    k=settings.web.search.max_results,
                    each_source=False,
                )
                self._made[names] = tools
        return dataclasses.replace(self.services, tools=tools)


@dataclass(eq=False)
class TurnRunner:
    """Starts, streams and stops the turns of every session."""

    settings: Settings
    services: Services
    graph: TurnGraph
    running: Turns
    runs: GraphRuns
    reader: SessionReader
    access: Access
    late: LateGrades

    def __post_init__(self) -> None:
        self._background: set[BackgroundTurn] = set()  # turns finishing after start()
        self._background_guard = threading.Lock()
        # Where a turn's memory recall runs while the graph starts (local2.graph._turn).
        self._ahead = ThreadPoolExecutor(max_workers=2, thread_name_prefix="local2-recall")
        # A second respondent the app and the API use unless a request says otherwise
        # (``local2 serve --model-b``); see :meth:`options`.
        self.compare_default: CompareSpec | None = None
        self.sources = ChatSources(self.settings, self.services)  # where web_search looks

    def options(
        self,
        model_b: str | None = None,
        temperature_b: float | None = None,
        *,
        compare: bool | None = None,
        sources: str | Sequence[str] | None = None,
    ) -> TurnOptions:
        """:func:`turn_options`, with this server's default second respondent."""
        return turn_options(
            model_b, temperature_b, compare=compare, default=self.compare_default, sources=sources
        )

    def with_sources(self, options: TurnOptions, sources: str | Sequence[str]) -> TurnOptions:
        """``options`` with the turn's ``web_search`` looking in ``sources`` (an unknown one
        refused with the known ones listed)."""
        return dataclasses.replace(options, sources=parse_sources(sources))

    def set_compare_default(self, model_b: str | None, temperature_b: float | None) -> None:
        """The second respondent of every turn that names none (``serve --model-b``)."""
        self.compare_default = compare_spec(model_b, temperature_b)

    def check(self, query: str, session_id: str | None, person: Person = LOCAL) -> CheckedId:
        """The turn's session id (a new one when none is given), claimed for ``person``; a
        question or an id that cannot be used, or someone else's session, raises here,
        before anything runs."""
        problem = validate_query(query, self.settings.generator.max_query_chars)
        if problem:
            raise InvalidQuery(problem)
        session_id = new_session_id() if session_id is None else check_session_id(session_id)
        self.access.claim_session(person, session_id)
        return session_id

    def produce(
        self,
        query: str,
        session_id: str,
        checkpoint_id: str | None,
        options: TurnOptions,
        approve: Approver | None,
        tokens: bool,
        owner: str = LOCAL.name,
    ) -> Produce:
        """The turn's item producer, run under the session's lock."""
        early = self._recall_after_last(session_id, query, owner)

        def produce(turn: RunningTurn) -> Iterator[StreamItem]:
            # Memory is searched for the question while LangGraph starts the run (the
            # session's lock is held: the last turn's memory writes are done), or already.
            ahead = early or recall_ahead(self.services, query, self._ahead.submit, owner)
            latest = self.graph.get_state(thread_of(session_id))  # read once, used twice
            waiting = pending_in(latest)
            if waiting is not None:
                raise AwaitingApproval(waiting)
            config = self.reader.continue_from(session_id, checkpoint_id, latest)
            services = self.sources.services_for(options.sources)
            context = TurnContext(services, options.compare, options.retry, ahead)
            turn_input: TurnState = {"query": query, "session_id": session_id, "owner": owner}
            yield from self.runs.run(
                turn_input, config, turn, approve, context=context, tokens=tokens
            )

        return produce

    def _recall_after_last(self, session_id: str, query: str, owner: str) -> RecallAhead | None:
        """When the session's last turn is past its answer here (its critic giving way), its
        memory is written within milliseconds: the recall starts as soon as it is, not once
        that turn's run has ended and its lock passed on. None otherwise."""
        last = self.running.running(session_id)
        if last is None or not last.published:
            return None
        written = last.remembered

        def submit(search: Callable[..., Any], *args: Any) -> Future[list[MemoryHit]]:
            def after_it() -> list[MemoryHit]:
                written.wait(MEMORY_WAIT_S)
                found: list[MemoryHit] = search(*args)
                return found

            return self._ahead.submit(after_it)

        return recall_ahead(self.services, query, submit, owner)

    def stream(
        self,
        query: str,
        session_id: str | None = None,
        approve: Approver | None = None,
        *,
        checkpoint_id: str | None = None,
        wait: bool = True,
        options: TurnOptions = NO_OPTIONS,
        tokens: bool = True,
        handed_over: threading.Event | None = None,
        person: Person = LOCAL,
    ) -> Iterator[StreamItem]:
        """Run one turn, yielding events, thinking and answer tokens as they happen.

        The question and the session id are checked here, before anything runs
        (:class:`~local2.errors.InvalidQuery`, :class:`~local2.errors.InvalidId`).
        The turn continues the session from its head, or from ``checkpoint_id`` (the end of a
        turn on another branch, which the session then continues on). :meth:`stop` ends it
        before its answer with :class:`~local2.errors.TurnCancelled` and nothing recorded. A
        turn of the same session already running is waited for, or refused
        (:class:`~local2.errors.SessionBusy`) when ``wait`` is false. A tool call that needs
        the person is put to ``approve`` (see :mod:`local2.contracts.approval`) and the turn
        goes on; without one the turn pauses and ends with an ``awaiting_approval`` payload,
        to be continued (:mod:`local2.service.chat._approvals`). ``options`` (from :meth:`options`)
        go into the run's context: ``compare`` has a second respondent answer too, ``retry``
        is a retry. Without ``tokens`` no ``thinking``/``token`` items
        come (the payload still has both), nor, unless two respondents answer, ``event``
        items (the payload's ``event_log`` has them): the model is not streamed through
        LangGraph, a few ms less per turn for a caller that wants only the answer
        (``POST /query``, ``bench/overhead.py``). The critic and memory start once the
        answer is yielded, or, with ``handed_over``, once the caller sets it (a reader in
        another thread; see :mod:`local2.service.chat._running`). The turn is ``person``'s: a new
        session becomes theirs, someone else's answers :class:`~local2.errors.UnknownTurn`.
        """
        session_id = self.check(query, session_id, person)
        produce = self.produce(
            query, session_id, checkpoint_id, options, approve, tokens, person.name
        )
        return self.running.run(session_id, produce, wait=wait, handed_over=handed_over)

    def ask(
        self,
        query: str,
        session_id: str | None = None,
        on_item: Callable[[str, Any], None] | None = None,
        approve: Approver | None = None,
        options: TurnOptions = NO_OPTIONS,
        person: Person = LOCAL,
    ) -> TurnPayload:
        """Run one turn and return its payload (``response.generation``)."""
        turn = self.stream(query, session_id, approve, options=options, person=person)
        return collect_turn(turn, on_item)

    def start(
        self,
        query: str,
        session_id: str | None = None,
        options: TurnOptions = NO_OPTIONS,
        *,
        tokens: bool = True,
        wait: bool = True,
        person: Person = LOCAL,
        approve: Approver | None = None,
    ) -> BackgroundTurn:
        """Start one turn in its own thread; it runs to its end whoever reads it.

        ``start(...).until_answer()`` is the payload at publish, while the critic grades;
        iterating the :class:`~local2.service.chat.BackgroundTurn` gives every item as
        it comes. ``approve``: as for :meth:`stream` (asked from the turn's thread).
        """
        session_id = self.check(query, session_id, person)
        return self._launch(query, session_id, options, tokens, wait, person, approve)

    async def begin(
        self,
        query: str,
        session_id: str | None = None,
        options: TurnOptions = NO_OPTIONS,
        *,
        tokens: bool = True,
        person: Person = LOCAL,
    ) -> BackgroundTurn:
        """:meth:`start`, from an event loop (``POST /query``): at once when that means no
        waiting; from a worker thread when a turn of the session is running (it is asked to
        make way first) or its lock is held over the network. The question and the session
        id are checked once, here."""
        checked = self.check(query, session_id, person)
        now = self._start_now(query, checked, options, tokens, person)
        if now is not None:
            return now
        return await to_thread.run_sync(self._launch, query, checked, options, tokens, True, person)

    def _start_now(
        self,
        query: str,
        session_id: CheckedId,
        options: TurnOptions,
        tokens: bool,
        person: Person,
    ) -> BackgroundTurn | None:
        """The turn started without waiting, or None when that would wait."""
        if self.running.remote:
            return None
        if self.running.running(session_id) is not None:
            self.running.make_way(session_id)
            return None
        try:
            return self._launch(query, session_id, options, tokens, False, person)
        except SessionBusy:
            return None

    def _launch(
        self,
        query: str,
        session_id: CheckedId,
        options: TurnOptions,
        tokens: bool,
        wait: bool,
        person: Person,
        approve: Approver | None = None,
    ) -> BackgroundTurn:
        """:meth:`start` for a question and an id checked already."""
        produce = self.produce(query, session_id, None, options, approve, tokens, person.name)
        turn = BackgroundTurn(on_done=self._done)
        with self._background_guard:
            self._background.add(turn)
        try:
            turn.turn = self.running.launch(
                session_id, produce, turn.put, turn.end, wait=wait, handed_over=turn.handed_over
            )
        except BaseException:
            self._done(turn)
            raise
        return turn

    def _done(self, turn: BackgroundTurn) -> None:
        with self._background_guard:
            self._background.discard(turn)

    def stop(self, session_id: str) -> bool:
        """Stop the running turn of ``session_id`` before its answer; False if there is none."""
        return self.running.stop(session_id)

    def is_running(self, session_id: str) -> bool:
        """Whether a turn of ``session_id`` is running here (and not being stopped)."""
        turn = self.running.running(session_id)
        return turn is not None and not turn.stop_requested.is_set()

    def is_answering(self, session_id: str) -> bool:
        """Whether a turn of ``session_id`` runs here and its answer is not out yet (after it,
        the next question may come: the critic and memory make way, or are waited for)."""
        turn = self.running.running(session_id)
        return turn is not None and not turn.published and not turn.stop_requested.is_set()

    def graded(self, final: TurnPayload, timeout: float) -> TurnPayload:
        """``final`` (a turn's last payload) with its own grade: as it is when the turn gave
        it; when the grade gave way to the session's next question, once given later (the
        payload still ``critique_pending`` if not within ``timeout``)."""
        if not final.get("critique_pending"):
            return final
        given = self.late.wait(str(final["session_id"]), str(final["query_id"]), timeout)
        return final if given is None else with_late_grade(final, given)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until turns started with :meth:`start` have ended and the grades owed here
        are given; True if they all were."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._background_guard:
                background = list(self._background)
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not background:
                return self.late.wait_all(left)
            if not background[0].join(left) and left == 0.0:
                return False

    def close(self) -> None:
        self._ahead.shutdown(wait=True)
