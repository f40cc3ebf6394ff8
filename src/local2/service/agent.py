"""The agent as a service: the one object the CLI, the HTTP API and the app all talk to.

A thin façade over parts with one job each, all sharing one wiring
(:mod:`local2.service.wiring`) and one lock per session:

- :attr:`Agent.access` (:class:`~local2.service.access.Access`): whose each session is,
  checked by every surface on a person's behalf;
- :attr:`Agent.turns` (:class:`~local2.service.chat.TurnRunner`): start, stream and stop
  turns;
- :attr:`Agent.reader` (:class:`~local2.service.chat.SessionReader`): a session's state,
  history, checkpoints and the prompt the model saw;
- :attr:`Agent.timetravel` (:class:`~local2.service.chat.TimeTravel`): replay and
  fork from any checkpoint;
- :attr:`Agent.ratings` (:class:`~local2.service.chat.Ratings`): ratings, and the
  preference between two answers; :attr:`Agent.retries`
  (:class:`~local2.service.chat.Retries`): a second attempt at a low-graded one;
- :attr:`Agent.approvals` (:class:`~local2.service.chat.Approvals`): tool calls that
  wait for the person;
- :attr:`Agent.research` (:class:`~local2.service.research.Research`): research runs on the
  same services, opened on first use;
- :attr:`Agent.documents` (:class:`~local2.service.desks.DocumentDesk`): each person's
  own documents (add, attach to a session, list, remove);
- :attr:`Agent.evals` (:class:`~local2.service.evals.Evals`): eval runs, each answered by an
  agent :meth:`beside <Agent.beside>` this one (its sessions open in time travel here).

A turn's items are ``(kind, data)`` pairs (:mod:`local2.contracts._stream`): events, thinking
and answer tokens as they happen, ``answer`` when publish ran, ``approval`` when a tool call
waits for the person, ``final`` at the end. A turn paused for approval ends with a payload
whose ``status`` is ``awaiting_approval``; :meth:`Agent.resume` goes on. A turn can be
stopped before its answer (:meth:`Agent.stop`); one that is stopped, fails or is killed
part-way leaves nothing the session continues from (:mod:`local2.graph.branches`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from typing_extensions import Unpack

from local2.config import Settings
from local2.contracts import (
    LOCAL,
    AgentInfo,
    Approver,
    CompareSpec,
    Person,
    SearchHits,
    SearchSource,
    StreamItem,
    TurnOptions,
)
from local2.graph import TurnGraph, compile_graph
from local2.ids import check_session_id
from local2.service.access import Access
from local2.service.chat import (
    Approvals,
    GraphRuns,
    LateGrades,
    Ratings,
    Retries,
    SessionReader,
    TimeTravel,
    TurnRunner,
    Turns,
    checkpoint_id,
)
from local2.service.desks import DocumentDesk, LibraryDesk

if TYPE_CHECKING:
    from local2.service.evals import Evals
    from local2.service.research import Research
from local2.service.warmup import first_turn
from local2.service.wiring import ModelParts, Parts, Wired, rewire, wire
from local2.storage import Vote, Voter

log = logging.getLogger(__name__)
CLOSE_WAIT_S = 60.0  # how long close() waits for background turns (a critic grading)

Part = TypeVar("Part")
P = ParamSpec("P")
R = TypeVar("R")


class Delegated(Generic[Part, P, R]):
    """A façade method that is a part's method: ``Agent.ask`` is ``agent.turns.ask``, with
    its signature and docstring (one definition, not two to keep in step)."""

    def __init__(self, part: str, method: Callable[Concatenate[Part, P], R]) -> None:
        self.part = part
        self.method = method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, agent: None, owner: type | None = None) -> Delegated[Part, P, R]: ...

    @overload
    def __get__(self, agent: object, owner: type | None = None) -> Callable[P, R]: ...

    def __get__(self, agent: object | None, owner: type | None = None) -> Any:
        if agent is None:
            return self
        return getattr(getattr(agent, self.part), self.method.__name__)


class Agent:
    """A LoCAL2 agent bound to a data directory.

    Every part the caller supplies is kept (a test's scripted ``chat_model``, ``tools``,
    ``memory`` or ``critic``, a shared ``checkpointer``: :class:`~local2.service.wiring.Parts`);
    the rest is built from ``settings``.
    """

    def __init__(self, settings: Settings | None = None, **parts: Unpack[Parts]) -> None:
        wired = wire(settings, **parts)
        # One turn at a time per session: in this process, and in every process sharing
        # the store (a Postgres advisory lock when the store is Postgres). The person first:
        # a session's next question makes the last answer's critic give way.
        yielding = wired.settings.critic.yield_to_new_turns
        turns = Turns(wired.storage.locks, yield_to_new_turns=yielding)
        self._assemble(wired, turns, owns_storage=True)

    def _assemble(
        self,
        wired: Wired,
        running: Turns,
        late: LateGrades | None = None,
        owns_storage: bool = False,
    ) -> None:
        self._owns_storage = owns_storage  # False: another agent's store, closed by it
        self.settings = wired.settings
        self.services = services = wired.services
        self.storage = wired.storage
        self.checkpointer = wired.storage.checkpointer
        # What the person must be told: a fallback model, canned search, a critic that is
        # off, memory on a fallback embedder or off.
        self.notices: list[str] = wired.notices
        self.graph = graph = compile_graph(services, self.checkpointer)
        self.running = running
        # Whose each session is: every surface checks here on a person's behalf.
        self.access = Access(wired.storage.people)
        # Each person's own documents (service/desks/_documents.py), searched in their sessions.
        self.documents = DocumentDesk(services.files, self.access)
        # What was read, kept per person (service/desks/_library.py, docs/library.md).
        self.library = LibraryDesk(self.settings)
        self.reader = SessionReader(self.settings, services, graph, running)
        # Grades that gave way to a next question, given when the session is quiet (one
        # grader for every model's agent of these sessions: see with_model).
        self.late_grades = late or LateGrades(self.settings, services, graph, running, self.reader)
        runs = self._graph_runs(graph, running)
        self.turns = TurnRunner(
            self.settings,
            services,
            graph,
            running,
            runs,
            self.reader,
            self.access,
            self.late_grades,
        )
        self.approvals = Approvals(graph, running, runs)
        self.timetravel = TimeTravel(
            self.settings,
            services,
            graph,
            self.checkpointer,
            running,
            runs,
            self.reader,
            for_model=lambda model: self.with_model(model).timetravel,
        )
        self.ratings = Ratings(services, graph, running, self.reader)
        self.retries = Retries(services, graph, running, self.reader)
        self._research: Research | None = None
        self._research_guard = threading.Lock()
        self._evals: Evals | None = None

    def _graph_runs(self, graph: TurnGraph, running: Turns) -> GraphRuns:
        """How the turns run: grades owed go to the late grader, and each finished turn is
        told to the library (its citations of the pages it kept)."""
        return GraphRuns(
            graph,
            self.settings,
            self.services,
            owe=self.late_grades.owe,
            yielding=running.yield_to_new_turns,
            done=self.library.turn_read,
        )

    @property
    def notice(self) -> str | None:
        """The start-up notices as one text (None when there are none)."""
        return "\n\n".join(self.notices) or None

    @property
    def research(self) -> Research:
        """Research runs on this agent's model, read-only tools, memory and critic
        (:class:`~local2.service.research.Research`), opened on first use."""
        with self._research_guard:
            if self._research is None:
                from local2.service.research import Research

                research = Research(self.settings, services=self.services, notice=self.notice)
                # The person first: a chat question makes a research run's critic give way.
                self.running.on_turn_start.append(lambda _session: research.make_way())
                self._research = research
            return self._research

    @property
    def evals(self) -> Evals:
        """Eval runs over this agent's store (:class:`~local2.service.evals.Evals`), opened
        on first use."""
        with self._research_guard:
            if self._evals is None:
                from local2.service.evals import Evals

                self._evals = Evals(self.settings, self.access, base=self)
            return self._evals

    def beside(self, settings: Settings, **parts: Unpack[ModelParts]) -> Agent:
        """Another agent on this one's store and session locks, with its own settings and
        parts (an eval run's: its corpus, no memory). Its sessions are this store's: they
        open in time travel here. :meth:`close` leaves the store to this agent."""
        other = Agent.__new__(Agent)
        wired = wire(settings, storage=self.storage, **parts)
        other._assemble(wired, self.running, self.late_grades)
        return other

    def with_model(self, model: str) -> Agent:
        """The same sessions, tools and memory, answered by another model (see
        :func:`~local2.service.wiring.rewire`). Turns of a session still run one at a time,
        whichever model answers."""
        other = Agent.__new__(Agent)
        wired = rewire(self.settings, self.services, self.storage, model)
        other._assemble(wired, self.running, self.late_grades)
        return other

    @property
    def info(self) -> AgentInfo:
        """The model answering and which parts are on, for a surface to show."""
        services = self.services
        return AgentInfo(
            model=services.model_name,
            backend=services.backend,
            native_tools=services.native_tools,
            tools=tuple(sorted(services.tools)),
            memory=services.memory is not None,
            critic=services.critic is not None,
        )

    @property
    def compare_default(self) -> CompareSpec | None:
        """The second respondent of every turn that names none (``serve --model-b``)."""
        return self.turns.compare_default

    def warm_up(self) -> None:
        """A first turn's one-time work, before the first question (a server just started)."""
        first_turn(self.services)

    def recover_grades(self) -> int:
        """Queue the grades the most recent sessions still owe (a server started again after
        stopping with grades owed); they are given in the background. How many."""
        return self.late_grades.recover()

    # -- turns: start, stream, stop --------------------------------------------------------
    turn_options = Delegated("turns", TurnRunner.options)
    set_compare_default = Delegated("turns", TurnRunner.set_compare_default)
    stream = Delegated("turns", TurnRunner.stream)
    ask = Delegated("turns", TurnRunner.ask)
    start = Delegated("turns", TurnRunner.start)
    stop = Delegated("turns", TurnRunner.stop)
    is_running = Delegated("turns", TurnRunner.is_running)
    is_answering = Delegated("turns", TurnRunner.is_answering)
    graded = Delegated("turns", TurnRunner.graded)
    wait_idle = Delegated("turns", TurnRunner.wait_idle)

    # -- tool calls waiting for the person -------------------------------------------------
    pending_approval = Delegated("approvals", Approvals.pending)
    resume = Delegated("approvals", Approvals.resume)
    decide = Delegated("approvals", Approvals.decide)

    # -- reading a session -----------------------------------------------------------------
    state = Delegated("reader", SessionReader.state)
    history = Delegated("reader", SessionReader.history)
    prompt_messages = Delegated("reader", SessionReader.prompt_messages)
    checkpoints = Delegated("reader", SessionReader.checkpoints)
    checkpoint_turns = Delegated("reader", SessionReader.checkpoint_turns)
    session = Delegated("reader", SessionReader.session)
    sessions = Delegated("reader", SessionReader.recent)
    turn = Delegated("reader", SessionReader.turn)

    def exists(self, session_id: str) -> bool:
        """Whether the session has something to continue from (a turn that settled)."""
        return self.reader.head(session_id) is not None

    def head_id(self, session_id: str) -> str | None:
        """The id of the checkpoint the session continues from (its current branch's end)."""
        head = self.reader.head(session_id)
        return checkpoint_id(head.config) if head is not None else None

    # -- time travel -----------------------------------------------------------------------
    replay = Delegated("timetravel", TimeTravel.replay)
    replay_stream = Delegated("timetravel", TimeTravel.replay_stream)

    # -- what the person says afterwards ---------------------------------------------------
    feedback = Delegated("ratings", Ratings.feedback)
    prefer = Delegated("ratings", Ratings.prefer)
    show = Delegated("retries", Retries.show)

    def retry(
        self,
        session_id: str,
        query_id: str,
        approve: Approver | None = None,
        person: Person = LOCAL,
    ) -> Iterator[StreamItem]:
        """Try ``query_id`` again with its critique as context: a turn of ``person``'s,
        streamed like one."""
        session_id = check_session_id(session_id)  # once, for the request and the turn
        query, first = self.retries.retry_request(session_id, query_id)
        options = TurnOptions(retry=first)
        return self.stream(query, session_id, approve, options=options, person=person)

    def search(
        self, person: Person, query: str, within: SearchSource = "files", k: int = 5
    ) -> SearchHits:
        """The ``k`` best passages of the person's own text (``within``: the folders, their
        documents, their memory) for ``query``: what the agent's tools would find
        (:mod:`local2.service.desks._search`)."""
        from local2.service.desks import Searcher, services_recall

        recall = services_recall(self.services) if self.services.memory is not None else None
        wait_s = self.settings.files.index_wait_s
        searcher = Searcher(self.services.files, recall, wait_s, self.library.search)
        return searcher.search(person, query, within, k)

    def votes(self, voter: Voter | None = None) -> list[Vote]:
        """The arena's votes so far (people's or the judge's, or both), oldest first."""
        from local2.graph import votes_of

        return votes_of(self.services).votes(voter)

    def own_votes(self, person: Person, everyone: bool = False) -> list[Vote]:
        """The votes of ``person``'s own sessions (an admin's ``everyone``: all, written
        down as one admin read), oldest first."""
        from local2.service.desks import visible_votes

        return visible_votes(self.access, person, self.votes(), everyone)

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Let turns still running (a critic grading) finish, and owed grades be given, then
        release everything (grades still owed stay owed in their sessions' state)."""
        if self._evals is not None:
            self._evals.close()  # stops the runs still going: they resume later
        if not self.wait_idle(wait_s):
            log.warning("closing with turns running or grades owed after %.0fs", wait_s)
        self.late_grades.close()
        self.library.settle(wait_s)  # what chat turns kept, indexed before the end
        self.services.runner.shutdown()
        self.turns.close()
        if self._research is not None:
            self._research.close()
        self.services.close_memory_shelf()  # everyone's memory but local's, closed next
        if self.services.memory is not None and hasattr(self.services.memory, "close"):
            self.services.memory.close()
        if self._owns_storage:
            if self.services.votes is not None:
                self.services.votes.close()
            self.storage.close()
