"""Grades that gave way to the person's next question, given once their session is quiet.

A turn whose critic gave way owes its grade in the session's state (``pending_grades``,
:mod:`local2.graph._graph`). This part gives it:

- **Queued** when a run ends owing grades (:meth:`LateGrades.owe`, from
  :class:`~local2.service.chat.GraphRuns`): the state carries what the session owes
  from turn to turn, so a grade owed by a process that stopped is picked up by the session's
  next turn in any process; and at start (:meth:`LateGrades.recover`), from the most recent
  sessions' heads.
- **Graded** once its session has been quiet for :data:`QUIET_S` (no turn here, nor in
  another process), oldest first, one grade at a time, *without* the session's lock: a turn
  of the session that starts meanwhile (``Turns.on_turn_start``, announced by other
  processes too) cancels the judge's request, and the grade stays queued.
- **Given** under the session's lock, in milliseconds, never waiting for it (a session busy
  again keeps the judged grade for its next quiet moment): where an in-run grade is kept
  (``keep_late``: the turn log's note, the engram's score, a pair's verdict and vote), a new
  checkpoint on the session's head (``landing``), the turn's audit record. A grade the turn
  log already notes (given by another process meanwhile) is landed without being kept again:
  no grade is written twice.
- **Awaited** by ``?wait=critique`` (:meth:`LateGrades.wait`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import cast

from langgraph.types import StateSnapshot

from local2 import events
from local2.config import Settings
from local2.contracts import Critique, PendingGrade, TurnPayload
from local2.errors import GaveWay, SessionBusy
from local2.graph import (
    LateGrade,
    Services,
    TurnGraph,
    TurnState,
    TurnUpdate,
    branches,
    judge_late,
    keep_late,
    landing,
    pairwise_verdict,
)
from local2.models import Cancellation
from local2.service.chat._running import Turns, thread_of
from local2.service.chat._sessions import SessionReader
from local2.storage import add_late_grade

log = logging.getLogger(__name__)

QUIET_S = 0.5  # a session this long without a turn is quiet: a person who paused
LOOK_AGAIN_S = 1.0  # a session busy in another process (or whose lock was taken) is looked at
RECOVER_SESSIONS = 50  # the most recent sessions whose owed grades a starting server gives
GIVEN_KEPT = 256  # grades given lately, kept for whoever waits on them (?wait=critique)


def with_late_grade(final: TurnPayload, given: TurnUpdate) -> TurnPayload:
    """A turn's final payload once its grade, which gave way to the next question, is
    ``given`` (:meth:`LateGrades.wait`): the critique, a pair's marks and the judge's verdict,
    the grade's events after the turn's."""
    graded = final.copy()
    graded.pop("critique_pending", None)
    graded["critique"] = given.get("critique")
    marks = given.get("respondents")
    if isinstance(marks, dict) and "respondents" in final:
        graded["respondents"] = {
            rid: {**answer, "critique": (marks.get(rid) or {}).get("critique")}
            for rid, answer in final["respondents"].items()
        }
    if given.get("pairwise"):
        graded["pairwise"] = pairwise_verdict(given.get("pairwise") or {})
    log = [e for e in given.get("event_log") or [] if isinstance(e, dict)]
    if any(e.get("subject") == events.RETRY_OFFERED for e in log):
        graded["retry_offered"] = True
    graded["event_log"] = [*final.get("event_log", []), *log]
    graded["events"] = [str(e.get("subject")) for e in graded["event_log"]]
    return graded


@dataclass
class Owed:
    """One grade a session owes, and the judge's answer once it has it."""

    session_id: str
    query_id: str
    pending: PendingGrade
    values: TurnState | None = None  # the turn's state, where its critique started
    grade: LateGrade | None = None  # judged, not given yet (the session was busy again)
    kept: bool = False  # kept already (by another process): only landed


class LateGrades:
    """Owed grades, given in the background once their session is quiet."""

    def __init__(
        self,
        settings: Settings,
        services: Services,
        graph: TurnGraph,
        running: Turns,
        reader: SessionReader,
    ) -> None:
        self.settings = settings
        self.services = services
        self.graph = graph
        self.running = running
        self.reader = reader
        self._owed: dict[str, dict[str, Owed]] = {}  # session -> query_id -> owed, oldest first
        self._quiet_from: dict[str, float] = {}  # session -> when it may be graded
        self._grading: tuple[str, Cancellation] | None = None
        self._given: OrderedDict[tuple[str, str], TurnUpdate] = OrderedDict()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        running.on_turn_start.append(self.turn_starting)
        running.on_idle.append(self.session_idle)

    # -- what the turns say ---------------------------------------------------------------

    def owe(self, session_id: str, pending: dict[str, PendingGrade]) -> None:
        """A run of the session ended owing these grades (its state's ``pending_grades``)."""
        if self.services.critic is None:  # switched off since: nothing to grade with
            return
        with self._cond:
            queue = self._owed.setdefault(session_id, {})
            for query_id, owed in pending.items():
                if query_id not in queue:
                    queue[query_id] = Owed(session_id, query_id, owed)
            self._start()
            self._cond.notify_all()

    def turn_starting(self, session_id: str) -> None:
        """A turn of the session is about to start (here or elsewhere): its grading gives way."""
        with self._cond:
            if session_id in self._owed:
                self._quiet_from[session_id] = time.monotonic() + LOOK_AGAIN_S
            if self._grading is not None and self._grading[0] == session_id:
                self._grading[1].set()

    def session_idle(self, session_id: str) -> None:
        """A turn of the session ended here: it is quiet from now (if no other starts)."""
        with self._cond:
            if session_id in self._owed and self.running.running(session_id) is None:
                self._quiet_from[session_id] = time.monotonic() + QUIET_S
                self._cond.notify_all()

    def recover(self, limit: int = RECOVER_SESSIONS) -> int:
        """Queue the grades the most recent sessions owe (a server started again); how many."""
        found = 0
        for row in self.services.turn_log.sessions(limit, None):
            head = self.reader.head(str(row["session_id"]))
            pending = dict((head.values or {}).get("pending_grades") or {}) if head else {}
            if pending:
                found += len(pending)
                self.owe(str(row["session_id"]), pending)
                self.session_idle(str(row["session_id"]))
        return found

    # -- waiting --------------------------------------------------------------------------

    def wait(self, session_id: str, query_id: str, timeout: float) -> TurnUpdate | None:
        """The grade of ``query_id`` once given (its update: ``critique``, and a pair's
        ``respondents`` and ``pairwise``); None if not given within ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while (given := self._given.get((session_id, query_id))) is None:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    return None
                self._cond.wait(left)
            return given

    def wait_all(self, timeout: float | None) -> bool:
        """Wait until no grade is owed here; True if none is."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while any(self._owed.values()) and not self._closed:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
            return not any(self._owed.values())

    def close(self) -> None:
        """Stop grading (a grade being judged gives way); what is owed stays in the state."""
        with self._cond:
            self._closed = True
            if self._grading is not None:
                self._grading[1].set()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(5)

    # -- the grader -----------------------------------------------------------------------

    def _start(self) -> None:
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._work, name="local2-grades", daemon=True)
            self._thread.start()

    def _next(self) -> tuple[Owed | None, float]:
        """The oldest grade of a quiet session, or how long until one may be."""
        now, soonest = time.monotonic(), LOOK_AGAIN_S
        for session_id, queue in self._owed.items():
            if not queue:
                continue
            ready = self._quiet_from.get(session_id)
            if ready is None or self.running.running(session_id) is not None:
                continue
            if ready <= now:
                return next(iter(queue.values())), 0.0
            soonest = min(soonest, ready - now)
        return None, soonest

    def _work(self) -> None:
        while True:
            with self._cond:
                owed, wait_s = self._next()
                while owed is None:
                    if self._closed:
                        return
                    self._cond.wait(wait_s)
                    owed, wait_s = self._next()
                if self._closed:
                    return
                cancel = Cancellation()
                self._grading = (owed.session_id, cancel)
            try:
                self._give(owed, cancel)
            except GaveWay:  # a turn of the session started: the grade stays owed
                pass
            except Exception:  # never a reason to stop grading the others
                log.exception("a late grade failed; it stays owed")
                self._look_again(owed.session_id)
            finally:
                with self._cond:
                    self._grading = None
                    self._cond.notify_all()

    def _look_again(self, session_id: str) -> None:
        with self._cond:
            self._quiet_from[session_id] = time.monotonic() + LOOK_AGAIN_S

    def _give(self, owed: Owed, cancel: Cancellation) -> None:
        """Judge the grade (unless done), then give it under the session's lock; the
        session's grades are this process's meanwhile (one judge per grade, however many
        processes know it is owed)."""
        session_id = owed.session_id
        if self.running.busy_elsewhere(session_id) or not self.running.claim_grading(session_id):
            self._look_again(session_id)
            return
        try:
            self._judge_and_land(owed, cancel)
        finally:
            self.running.release_grading(session_id)

    def _judge_and_land(self, owed: Owed, cancel: Cancellation) -> None:
        session_id = owed.session_id
        if owed.values is None:
            owed.values = self._turn_values(owed)
        if owed.grade is None:
            noted = self._noted(owed)
            if noted is not None:
                owed.grade, owed.kept = LateGrade(noted), True
            else:
                owed.grade = judge_late(owed.values, self.services, owed.pending, cancel)
        try:
            with self.running.hold(session_id, wait=False):
                given = self._land(owed)
        except SessionBusy:  # a turn came as the judge finished: given when it is quiet
            self._look_again(session_id)
            return
        with self._cond:
            queue = self._owed.get(session_id, {})
            queue.pop(owed.query_id, None)
            if not queue:  # nothing owed here any more: forget the session
                self._owed.pop(session_id, None)
                self._quiet_from.pop(session_id, None)
            self._given[(session_id, owed.query_id)] = given
            while len(self._given) > GIVEN_KEPT:
                self._given.popitem(last=False)
            self._cond.notify_all()

    def _turn_values(self, owed: Owed) -> TurnState:
        """The turn's state where its critique started (or, if that checkpoint is not named,
        the newest settled one of that turn)."""
        checkpoint = owed.pending.get("checkpoint_id")
        if checkpoint:
            # LangGraph types a snapshot's values as any dict; this graph's are its TurnState.
            return cast(
                "TurnState", {**self.graph.get_state(thread_of(owed.session_id, checkpoint)).values}
            )
        found: StateSnapshot | None = next(
            (
                s
                for s in self.graph.get_state_history(
                    thread_of(owed.session_id), limit=branches.SEARCH_LIMIT
                )
                if (s.values or {}).get("query_id") == owed.query_id and branches.settled(s)
            ),
            None,
        )
        if found is None:
            raise LookupError(f"no checkpoint of turn {owed.query_id}")
        return cast("TurnState", {**found.values})

    def _noted(self, owed: Owed) -> Critique | None:
        """The grade the turn log already has for the turn (given elsewhere), if any."""
        turn_id = owed.pending.get("turn_id")
        if not turn_id:
            return None
        noted: Critique | None = (
            self.services.turn_log.notes([turn_id]).get(turn_id, {}).get("critique")
        )
        return noted

    def _land(self, owed: Owed) -> TurnUpdate:
        """Give the grade: keep it (unless kept already), land it on the head if the head
        still owes it, add it to the turn's audit record. Under the session's lock.

        Only a head that ended its turn takes the grade: one paused for an approval keeps its
        pause (and its entry: the run that ends it owes the grade again, which then lands,
        kept already)."""
        assert owed.values is not None and owed.grade is not None
        noted = None if owed.kept else self._noted(owed)
        if noted is not None:  # kept elsewhere while this process judged
            owed.grade, owed.kept = LateGrade(noted), True
        if owed.kept:
            given: TurnUpdate = {"critique": owed.grade.critique}
        else:
            given = keep_late(owed.values, self.services, owed.pending, owed.grade)
            owed.kept = True
        head = self.reader.head(owed.session_id)
        owes = head is not None and owed.query_id in (head.values.get("pending_grades") or {})
        if head is not None and owes and not head.next:
            update = landing(head.values, owed.query_id, given)
            self.graph.update_state(head.config, update, as_node="ingest")
        add_late_grade(
            self.settings,
            owed.session_id,
            owed.query_id,
            owed.grade.critique,
            [e for e in given.get("event_log") or [] if isinstance(e, dict)],
        )
        return given
