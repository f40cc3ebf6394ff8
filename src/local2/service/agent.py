"""The agent as a service: the one object the CLI, the HTTP API and the app all talk to.

It composes parts with one job each, all sharing one wiring
(:mod:`local2.service.wiring`) and one lock per session, and forwards nothing: a surface
reaches each feature through its one part (``agent.turns.ask(...)``,
``agent.sessions.history(...)``; the table in docs/architecture.md, "One way in"):

- :attr:`Agent.access` (:class:`~local2.service.access.Access`): whose each session is,
  checked by every surface on a person's behalf;
- :attr:`Agent.turns` (:class:`~local2.service.chat.TurnRunner`): start, stream and stop
  turns;
- :attr:`Agent.sessions` (:class:`~local2.service.chat.SessionReader`): a session's state,
  history, checkpoints and the prompt the model saw, and the recent sessions;
- :attr:`Agent.timetravel` (:class:`~local2.service.chat.TimeTravel`): replay and
  fork from any checkpoint;
- :attr:`Agent.ratings` (:class:`~local2.service.chat.Ratings`): ratings, and the
  preference between two answers; :attr:`Agent.retries`
  (:class:`~local2.service.chat.Retries`): a second attempt at a low-graded one;
  :attr:`Agent.votes` (:class:`~local2.service.desks.VoteDesk`): the arena's votes;
- :attr:`Agent.approvals` (:class:`~local2.service.chat.Approvals`): tool calls that
  wait for the person;
- :attr:`Agent.research` (:class:`~local2.service.research.Research`): research runs on the
  same services, opened on first use;
- :attr:`Agent.documents` (:class:`~local2.service.desks.DocumentDesk`): each person's
  own documents (add, attach to a session, list, remove); :attr:`Agent.searcher`
  (:class:`~local2.service.desks.Searcher`): a search of their own text;
- :attr:`Agent.evals` (:class:`~local2.service.evals.Evals`): eval runs, each answered by an
  agent :meth:`beside <Agent.beside>` this one (its sessions open in time travel here);
- :attr:`Agent.watches` (:class:`~local2.service.watches.WatchDesk`): each person's watches,
  opened on first use; :meth:`Agent.start_watching` runs their scheduler in a server.

A turn's items are ``(kind, data)`` pairs (:mod:`local2.contracts._stream`): events, thinking
and answer tokens as they happen, ``answer`` when publish ran, ``approval`` when a tool call
waits for the person, ``final`` at the end. A turn paused for approval ends with a payload
whose ``status`` is ``awaiting_approval``; ``agent.approvals.resume`` goes on. A turn can be
stopped before its answer (``agent.turns.stop``); one that is stopped, fails or is killed
part-way leaves nothing the session continues from (:mod:`local2.graph.branches`).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from typing_extensions import Unpack

from local2.config import Settings
from local2.contracts import AgentInfo
from local2.graph import TurnGraph, compile_graph, votes_of
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
)
from local2.service.desks import DocumentDesk, LibraryDesk, Searcher, VoteDesk, services_recall

if TYPE_CHECKING:
    from local2.service.evals import Evals
    from local2.service.research import Research
    from local2.service.watches import WatchDesk, Watching
from local2.service.warmup import first_turn
from local2.service.wiring import ModelParts, Parts, Wired, rewire, wire

log = logging.getLogger(__name__)
CLOSE_WAIT_S = 60.0  # how long close() waits for background turns (a critic grading)


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
        self.sessions = SessionReader(self.settings, services, graph, running)
        # Grades that gave way to a next question, given when the session is quiet (one
        # grader for every model's agent of these sessions: see with_model).
        self.late_grades = late or LateGrades(
            self.settings, services, graph, running, self.sessions
        )
        runs = self._graph_runs(graph, running)
        self.turns = TurnRunner(
            self.settings,
            services,
            graph,
            running,
            runs,
            self.sessions,
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
            self.sessions,
            for_model=lambda model: self.with_model(model).timetravel,
        )
        self.ratings = Ratings(services, graph, running, self.sessions)
        self.retries = Retries(services, graph, running, self.sessions, self.turns)
        # The arena's votes (service/desks/_audit.py), a person's own or all of them.
        self.votes = VoteDesk(lambda voter: votes_of(services).votes(voter), self.access)
        # A search of a person's own text: what the agent's tools would find.
        recall = services_recall(services) if services.memory is not None else None
        wait_s = self.settings.files.index_wait_s
        self.searcher = Searcher(services.files, recall, wait_s, self.library.search)
        self._research: Research | None = None
        self._research_guard = threading.Lock()
        self._evals: Evals | None = None
        self._watches: WatchDesk | None = None
        self._watching: Watching | None = None

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
                # lazy: markdown_it, mdurl, local2.research: ~65 ms, 91 modules at import
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
                # lazy: local2.evals, local2.service: ~31 ms, 21 modules at import
                from local2.service.evals import Evals

                self._evals = Evals(self.settings, self.access, base=self)
            return self._evals

    @property
    def watches(self) -> WatchDesk:
        """Each person's watches, in the watch store beside their data (opened on first use)."""
        with self._research_guard:
            if self._watches is None:
                # lazy: apscheduler, markdown_it, local2.research: ~148 ms, 210 modules at import
                from local2.service.watches import open_watch_desk

                self._watches = open_watch_desk(self.settings)
            return self._watches

    def start_watching(self) -> bool:
        """Run the watches' scheduler in this process (a server's, until :meth:`close`),
        unless ``watch.enabled`` is false; whether it runs. Research opens when a run is due."""
        if not self.settings.watch.enabled:
            return False
        if self._watching is None:
            # lazy: apscheduler, markdown_it, local2.research: ~147 ms, 210 modules at import
            from local2.service.watches import Watching

            self._watching = Watching(self.watches, lambda: self.research)
            self._watching.start()
        return True

    def stop_watching(self) -> None:
        """Stop this process's scheduler; a run going on is left to its lease (taken over by
        another process, or by this one's next start)."""
        if self._watching is not None:
            self._watching.stop()
            self._watching = None

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

    def warm_up(self) -> None:
        """A first turn's one-time work, before the first question (a server just started)."""
        first_turn(self.services)

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Let turns still running (a critic grading) finish, and owed grades be given, then
        release everything (grades still owed stay owed in their sessions' state)."""
        self.stop_watching()
        if self._evals is not None:
            self._evals.close()  # stops the runs still going: they resume later
        if not self.turns.wait_idle(wait_s):
            log.warning("closing with turns running or grades owed after %.0fs", wait_s)
        self.late_grades.close()
        self.library.settle(wait_s)  # what chat turns kept, indexed before the end
        self.services.runner.shutdown()
        self.turns.close()
        if self._research is not None:
            self._research.close()
        if self._watches is not None:
            self._watches.close()
        self.services.close_memory_shelf()  # everyone's memory but local's, closed next
        if self.services.memory is not None and hasattr(self.services.memory, "close"):
            self.services.memory.close()
        if self._owns_storage:
            if self.services.votes is not None:
                self.services.votes.close()
            self.storage.close()
