"""The agent as a service: the one object the CLI, the HTTP API and the app all talk to.

A thin façade over parts with one job each, all sharing one wiring
(:mod:`local2.service.wiring`) and one lock per session:

- :attr:`Agent.turns` (:class:`~local2.service.turns.TurnRunner`): start, stream and stop
  turns;
- :attr:`Agent.reader` (:class:`~local2.service.sessions.SessionReader`): a session's state,
  history, checkpoints and the prompt the model saw;
- :attr:`Agent.timetravel` (:class:`~local2.service.timetravel.TimeTravel`): replay and
  fork from any checkpoint;
- :attr:`Agent.ratings` (:class:`~local2.service.ratings.Ratings`): ratings, and the
  preference between two answers; :attr:`Agent.retries`
  (:class:`~local2.service.retries.Retries`): a second attempt at a low-graded one;
- :attr:`Agent.approvals` (:class:`~local2.service.approvals.Approvals`): tool calls that
  wait for the person;
- :attr:`Agent.research` (:class:`~local2.service.research.Research`): research runs on the
  same services, opened on first use.

A turn's items are ``(kind, data)`` pairs (:mod:`local2.contracts.stream`): events, thinking
and answer tokens as they happen, ``answer`` when publish ran, ``approval`` when a tool call
waits for the person, ``final`` at the end. A turn paused for approval ends with a payload
whose ``status`` is ``awaiting_approval``; :meth:`Agent.resume` goes on. A turn can be
stopped before its answer (:meth:`Agent.stop`); one that is stopped, fails or is killed
part-way leaves nothing the session continues from (:mod:`local2.graph.branches`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver

from local2.config import Settings
from local2.contracts import approval
from local2.contracts.approval import Approver, Decision
from local2.contracts.stream import StreamItem
from local2.contracts.turn import (
    CheckpointRow,
    FeedbackResult,
    HistoryTurn,
    SessionSummary,
    TurnPayload,
)
from local2.graph.nodes.retry import CONFIG_KEY as RETRY_KEY
from local2.graph.topology import compile_graph
from local2.service.approvals import Approvals
from local2.service.background import BackgroundTurn
from local2.service.graph_runs import GraphRuns
from local2.service.ratings import Ratings
from local2.service.retries import Retries
from local2.service.running import Turns
from local2.service.sessions import SessionReader, checkpoint_id
from local2.service.timetravel import TimeTravel
from local2.service.turns import TurnRunner
from local2.service.warmup import first_turn
from local2.service.wiring import AUTO, Wired, rewire, wire
from local2.storage.locks import SharedLocks
from local2.storage.turn_log import TurnLog
from local2.storage.votes import Vote, Voter
from local2.tools.base import Tool

log = logging.getLogger(__name__)
CLOSE_WAIT_S = 60.0  # how long close() waits for background turns (a critic grading)


class Agent:
    """A LoCAL2 agent bound to a data directory.

    Every part the caller supplies is kept (a test's scripted ``chat_model``, ``tools``,
    ``memory`` or ``critic``, a shared ``checkpointer``); the rest is built from ``settings``.
    """

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
        wired = wire(
            settings,
            chat_model=chat_model,
            backend=backend,
            model=model,
            native_tools=native_tools,
            notice=notice,
            tools=tools,
            memory=memory,
            critic=critic,
            checkpointer=checkpointer,
            turn_log=turn_log,
            session_locks=session_locks,
        )
        # One turn at a time per session: in this process, and in every process sharing
        # the store (a Postgres advisory lock when the store is Postgres).
        self._assemble(wired, Turns(wired.storage.locks))

    def _assemble(self, wired: Wired, running: Turns) -> None:
        self.settings = wired.settings
        self.services = wired.services
        self.storage = wired.storage
        self.checkpointer = wired.storage.checkpointer
        # What the person must be told: a fallback model, canned search, a critic that is
        # off, memory on a fallback embedder or off.
        self.notices: list[str] = wired.notices
        self.graph = compile_graph(self.services, self.checkpointer)
        self.running = running
        runs = GraphRuns(self.graph, self.settings)
        self.reader = SessionReader(self.settings, self.services, self.graph, running)
        self.turns = TurnRunner(
            self.settings, self.services, self.graph, running, runs, self.reader
        )
        self.approvals = Approvals(self.graph, running, runs)
        self.timetravel = TimeTravel(
            self.settings,
            self.services,
            self.graph,
            self.checkpointer,
            running,
            runs,
            self.reader,
            for_model=lambda model: self.with_model(model).timetravel,
        )
        self.ratings = Ratings(self.services, self.graph, running, self.reader)
        self.retries = Retries(self.services, self.graph, running, self.reader)
        # A second respondent the app and the API use unless a request says otherwise
        # (``local2 serve --model-b``); see :mod:`local2.graph.compare`.
        self.compare_default: dict[str, Any] | None = None
        self._research: Any = None
        self._research_guard = threading.Lock()

    @property
    def notice(self) -> str | None:
        """The start-up notices as one text (None when there are none)."""
        return "\n\n".join(self.notices) or None

    @property
    def research(self) -> Any:
        """Research runs on this agent's model, read-only tools, memory and critic
        (:class:`~local2.service.research.Research`), opened on first use."""
        with self._research_guard:
            if self._research is None:
                from local2.service.research import Research

                self._research = Research(self.settings, services=self.services, notice=self.notice)
            return self._research

    def with_model(self, model: str) -> Agent:
        """The same sessions, tools and memory, answered by another model on the same kind of
        server (Ollama unless this agent talks to an OpenAI-compatible one; an Ollama model
        must be pulled: it is never silently replaced). Turns of a session still run one at
        a time, whichever model answers."""
        other = Agent.__new__(Agent)
        other._assemble(rewire(self.settings, self.services, self.storage, model), self.running)
        return other

    def warm_up(self) -> None:
        """A first turn's one-time work, before the first question (a server just started)."""
        first_turn(self.services)

    # -- turns -----------------------------------------------------------------------------

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
        """Run one turn, yielding events, thinking and answer tokens as they happen
        (:meth:`TurnRunner.stream <local2.service.turns.TurnRunner.stream>` says how)."""
        return self.turns.stream(
            query,
            session_id,
            approve,
            checkpoint_id=checkpoint_id,
            wait=wait,
            options=options,
            tokens=tokens,
            handed_over=handed_over,
        )

    def ask(
        self,
        query: str,
        session_id: str | None = None,
        on_item: Callable[[str, Any], None] | None = None,
        approve: Approver | None = None,
        options: dict[str, Any] | None = None,
    ) -> TurnPayload:
        """Run one turn and return its payload (``response.generation``)."""
        return self.turns.ask(query, session_id, on_item, approve, options)

    def start(
        self,
        query: str,
        session_id: str | None = None,
        options: dict[str, Any] | None = None,
        *,
        tokens: bool = True,
        wait: bool = True,
    ) -> BackgroundTurn:
        """Start one turn in its own thread; it runs to its end whoever reads it
        (:meth:`TurnRunner.start <local2.service.turns.TurnRunner.start>`)."""
        return self.turns.start(query, session_id, options, tokens=tokens, wait=wait)

    def stop(self, session_id: str) -> bool:
        """Stop the running turn of ``session_id`` before its answer; False if there is none."""
        return self.turns.stop(session_id)

    def is_running(self, session_id: str) -> bool:
        """Whether a turn of ``session_id`` is running here (and not being stopped)."""
        return self.turns.is_running(session_id)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until turns started with :meth:`start` have ended; True if they all did."""
        return self.turns.wait_idle(timeout)

    # -- approvals -------------------------------------------------------------------------

    def pending_approval(self, session_id: str) -> dict[str, Any] | None:
        """The request a paused turn of this session waits on, or None."""
        return self.approvals.pending(session_id)

    def resume(
        self,
        session_id: str,
        decision: Decision,
        approve: Approver | None = None,
        by: str = approval.PERSON,
    ) -> Iterator[StreamItem]:
        """Continue a paused turn with the person's decision (all calls, or per call id)."""
        return self.approvals.resume(session_id, decision, approve, by)

    def decide(
        self, session_id: str, decision: Decision, approve: Approver | None = None
    ) -> TurnPayload:
        """:meth:`resume` to the end; returns the payload (which may wait again)."""
        return self.approvals.decide(session_id, decision, approve)

    # -- reading a session -----------------------------------------------------------------

    def state(self, session_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
        """The state at a checkpoint, or at the session's head (never a dead turn's leftover)."""
        return self.reader.state(session_id, checkpoint_id)

    def exists(self, session_id: str) -> bool:
        """Whether the session has something to continue from (a turn that settled)."""
        return self.reader.head(session_id) is not None

    def head_id(self, session_id: str) -> str | None:
        """The id of the checkpoint the session continues from (its current branch's end)."""
        head = self.reader.head(session_id)
        return checkpoint_id(head.config) if head is not None else None

    def history(
        self,
        session_id: str,
        limit: int | None = None,
        *,
        checkpoint_id: str | None = None,
        detail: bool = False,
    ) -> list[HistoryTurn]:
        """The session's clean turns, oldest first (see :meth:`SessionReader.history
        <local2.service.sessions.SessionReader.history>`)."""
        return self.reader.history(session_id, limit, checkpoint_id=checkpoint_id, detail=detail)

    def prompt_messages(self, session_id: str, checkpoint_id: str | None = None) -> list[dict]:
        """The messages array the model saw at that point (thinking removed)."""
        return self.reader.prompt_messages(session_id, checkpoint_id)

    def sessions(self, limit: int = 20) -> list[SessionSummary]:
        """Recent sessions, newest first."""
        return self.reader.recent(limit)

    def checkpoints(self, session_id: str, limit: int = 50) -> list[CheckpointRow]:
        """A session's checkpoints, newest first (``current``: on the branch it continues
        from; ``abandoned``: left by a turn that never finished)."""
        return self.reader.checkpoints(session_id, limit)

    # -- time travel -----------------------------------------------------------------------

    def replay(
        self,
        session_id: str,
        checkpoint_id: str,
        query: str | None = None,
        model: str | None = None,
        approve: Approver | None = None,
    ) -> TurnPayload:
        """Re-run from a past checkpoint as a new branch; the original stays intact
        (:meth:`TimeTravel.replay <local2.service.timetravel.TimeTravel.replay>`)."""
        return self.timetravel.replay(session_id, checkpoint_id, query, model, approve)

    def replay_stream(
        self,
        session_id: str,
        checkpoint_id: str,
        query: str | None = None,
        model: str | None = None,
        approve: Approver | None = None,
    ) -> Iterator[StreamItem]:
        """:meth:`replay`, streamed like a turn."""
        return self.timetravel.replay_stream(session_id, checkpoint_id, query, model, approve)

    # -- ratings ---------------------------------------------------------------------------

    def feedback(
        self, session_id: str, query_id: str, rating: int, comment: str | None = None
    ) -> FeedbackResult:
        """Record a person's 1-5 rating of a turn (see :mod:`local2.service.ratings`)."""
        return self.ratings.feedback(session_id, query_id, rating, comment)

    def prefer(
        self, session_id: str, query_id: str, preferred: str, comment: str | None = None
    ) -> FeedbackResult:
        """Which of two compared answers is better (``a``, ``b`` or ``tie``)."""
        return self.ratings.prefer(session_id, query_id, preferred, comment)

    def retry(
        self, session_id: str, query_id: str, approve: Approver | None = None
    ) -> Iterator[StreamItem]:
        """Try ``query_id`` again with its critique as context: a turn, streamed like one."""
        query, first = self.retries.retry_request(session_id, query_id)
        return self.stream(query, session_id, approve, options={RETRY_KEY: first})

    def show(self, session_id: str, query_id: str, attempt: int) -> dict[str, Any]:
        """Continue the session from attempt 1 or 2 of a retried answer."""
        return self.retries.show(session_id, query_id, attempt)

    def votes(self, voter: Voter | None = None) -> list[Vote]:
        """The arena's votes so far (people's or the judge's, or both), oldest first."""
        from local2.graph.compare.votes import votes_of

        return votes_of(self.services).votes(voter)

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Let turns still running (a critic grading) finish, then release everything."""
        if not self.wait_idle(wait_s):
            log.warning("closing with turns still running after %.0fs", wait_s)
        self.services.runner.shutdown()
        self.turns.close()
        if self._research is not None:
            self._research.close()
        if self.services.memory is not None and hasattr(self.services.memory, "close"):
            self.services.memory.close()
        if self.services.votes is not None:
            self.services.votes.close()
        self.storage.close()
