"""Running a research run: one at a time per run, its stream as items, its pauses.

:class:`RunDriver` is what :class:`~local2.service.research.Research` runs a run with, for
every way a run goes on (a start, a resume, an answer to a pause, a follow-up): the run is
this process's while it runs (and, on Postgres, no other process's), the graph's stream
becomes items, and a pause (LangGraph ``interrupt``) ends the items with
``awaiting_input`` and a ``final`` payload saying so, unless someone at hand answers it
(the CLI's terminal).

The person first (``critic.yield_to_new_turns``): a run's critic gives way to the person's
next question (a new run, a follow-up, a chat turn: :meth:`RunDriver.make_way`) as the chat
critic does; the run ends at once, its grade owed, and the grade is given once nothing runs
here (:meth:`RunDriver.grade_owed`, in the background; a grade owed when this process ends is
not given: it is only a grade, and the run says it is owed).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, StreamMode

from local2.contracts import (
    LOCAL,
    PendingInput,
    ResearchInput,
    ResearchItem,
    ResearchPayload,
    RunItem,
)
from local2.errors import GaveWay, InvalidInput, RunBusy
from local2.graph import Services
from local2.models import Cancellation
from local2.research import (
    ResearchContext,
    ResearchGraph,
    ResearchState,
    finished_status,
    late_grade,
    research_payload,
)
from local2.service.research._input import check_input, pending_request
from local2.storage import ResearchStorage

RUN_MODES: list[StreamMode] = ["custom", "values"]
GIVE_WAY_WAIT_S = 5.0  # the longest a follow-up waits for its run's critic to give way
QUIET_S = 0.5  # how long nothing runs here before a grade owed is given
# Answers a pause on the spot (the CLI's terminal); None leaves the run paused.
Answerer = Callable[[PendingInput], ResearchInput | None]


def run_config(run_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}


def finished(snapshot: Any) -> bool:
    """Nothing left to run: no next node and no pending task (steps handed out by ``Send``
    are tasks, not ``next``)."""
    return not snapshot.next and not snapshot.tasks


@dataclass(eq=False)
class RunDriver:
    """Runs research runs of one graph, one at a time per run."""

    graph: ResearchGraph
    context: ResearchContext
    storage: ResearchStorage
    services: Services
    running: set[str] = field(default_factory=set)
    # Runs with a context of their own (research from the library), by run id.
    contexts: dict[str, ResearchContext] = field(default_factory=dict)
    yielding: bool = True  # critic.yield_to_new_turns: a critic gives way to a next question
    _guard: threading.Lock = field(default_factory=threading.Lock)
    _give_way: dict[str, Cancellation] = field(default_factory=dict)  # runs in flight
    _owed: set[str] = field(default_factory=set)  # runs whose grade gave way, graded later
    _grader: threading.Thread | None = None

    def make_way(self) -> None:
        """The person asked something: every run's critic here gives way (its grade owed)."""
        with self._guard:
            waiting = list(self._give_way.values())
        for cancel in waiting:
            cancel.set()

    def awaiting(self, run_id: str) -> PendingInput | None:
        return pending_request(self.graph.get_state(run_config(run_id)))

    def drive(
        self,
        graph_input: Any,
        run_id: str,
        question: str,
        snapshot: Any = None,
        owner: str = LOCAL.name,
        answer: Answerer | None = None,
    ) -> Iterator[ResearchItem]:
        with self.claim(run_id) as context:
            started: RunItem = {
                "run_id": run_id,
                "question": question,
                "resumed": snapshot is not None,
            }
            yield ("run", started)
            if snapshot is not None and finished(snapshot):
                yield ("final", research_payload(dict(snapshot.values)))
                return
            self.storage.index.start(run_id, question, self.services.model_name, owner)
            final = cast(ResearchState, {})  # the last values, once the run has any
            status = "interrupted"
            try:
                while True:
                    final, paused = yield from self._run(graph_input, run_id, final, context)
                    request = self.awaiting(run_id) if paused else None
                    if request is None:
                        break
                    yield ("awaiting_input", request)
                    graph_input = self._answered(run_id, request, answer)
                    if graph_input is None:  # nobody here to answer: the run stays paused
                        status = "awaiting_input"
                        yield ("final", self._paused(final, request))
                        return
                status = finished_status(final) if final.get("report") else "unfinished"
            except Exception:
                status = "failed"
                raise
            finally:
                self.storage.index.set_status(run_id, status)
                if final.get("grade_owed"):
                    with self._guard:
                        self._owed.add(run_id)
            yield ("final", research_payload(final))

    def _run(
        self, graph_input: Any, run_id: str, final: ResearchState, context: ResearchContext
    ) -> Generator[ResearchItem, None, tuple[ResearchState, bool]]:
        """One graph run's items; returns (``yield from``) its last values, and whether it
        paused (LangGraph's ``__interrupt__`` in the values: only then is the state read)."""
        paused = False
        for part in self.graph.stream(
            graph_input,
            run_config(run_id),
            context=context,  # passed again on a resume: LangGraph keeps none
            stream_mode=RUN_MODES,
            durability="sync",
        ):
            mode, data = cast(tuple[str, Any], part)
            if mode == "custom":
                if "event" in data:
                    yield ("event", data["event"])
                if "payload" in data:
                    yield ("report", data["payload"])
                if "followup" in data:
                    yield ("followup", data["followup"])
            elif "__interrupt__" in data:  # a pause: the values before it stand
                paused = True
            else:
                final = data
        return final, paused

    def _answered(
        self, run_id: str, request: PendingInput, answer: Answerer | None
    ) -> Command[Any] | None:
        """The resume for ``request`` from ``answer`` (asked again while what it gives cannot
        be used), or None when there is no one to answer."""
        while answer is not None:
            given = answer(request)
            if given is None:
                return None
            values = cast(ResearchState, self.graph.get_state(run_config(run_id)).values)
            try:
                check_input(run_id, request, given, values, self.services)
            except InvalidInput as exc:
                request = {**request, "error": exc.message}
                continue
            return Command(resume={request["interrupt_id"]: given.model_dump(exclude_none=True)})
        return None

    def _paused(self, final: ResearchState, request: PendingInput) -> ResearchPayload:
        payload = research_payload(final)
        payload["status"] = "awaiting_input"
        payload["awaiting"] = request
        return payload

    @contextmanager
    def claim(self, run_id: str) -> Iterator[ResearchContext]:
        """The run is this process's until it ends; every other process is refused it too.
        A run that is giving way (its critic cancelled) is waited for, a moment. Yields the
        run's context, with its own ``give_way``."""
        self.make_way()  # the person asks something: other runs' critics give way
        cancel = Cancellation()
        self._take(run_id, cancel)
        try:
            with self._held(run_id) as locked:
                if not locked:
                    raise RunBusy(f"Run {run_id} is already running in another process.")
                base = self.contexts.get(run_id, self.context)  # a run from the library: its own
                yield dataclasses.replace(base, give_way=cancel if self.yielding else None)
        finally:
            self.grade_owed()

    @contextmanager
    def _held(self, run_id: str) -> Iterator[bool]:
        """A run :meth:`_take` took, for the block: yields whether the store's lock on it was
        got too (False: another process drives it), and then lets the run go here."""
        try:
            locked = self.storage.locks.acquire(run_id, blocking=False)
            try:
                yield locked
            finally:
                if locked:
                    self.storage.locks.release(run_id)
        finally:
            with self._guard:
                self.running.discard(run_id)
                self._give_way.pop(run_id, None)

    def _take(self, run_id: str, cancel: Cancellation) -> None:
        deadline = time.monotonic() + GIVE_WAY_WAIT_S
        while True:
            with self._guard:
                ending = self._give_way.get(run_id)
                if run_id not in self.running:
                    self.running.add(run_id)
                    self._give_way[run_id] = cancel
                    return
            if ending is None or not ending.is_set() or time.monotonic() > deadline:
                raise RunBusy(f"Run {run_id} is already running.")
            time.sleep(0.02)  # its critic gives way: it ends in milliseconds

    def wait_ended(self, run_id: str) -> None:
        """Make way, and wait (a moment at most) for ``run_id`` to end here."""
        deadline = time.monotonic() + GIVE_WAY_WAIT_S
        while run_id in self.running and time.monotonic() < deadline:
            self.make_way()  # the run's critic, or a late grade of it
            time.sleep(0.02)

    def grade_owed(self) -> None:
        """Grade the runs whose critic gave way, in the background, once nothing runs here
        (one grader at a time; a next question makes it give way again)."""
        with self._guard:
            if self.running or not self._owed or (self._grader and self._grader.is_alive()):
                return
            self._grader = threading.Thread(target=self._grade, name="research-late-grades")
            self._grader.daemon = True
            self._grader.start()

    def _grade(self) -> None:
        time.sleep(QUIET_S)  # a question that follows the report at once comes first
        while True:
            with self._guard:
                if self.running or not self._owed:
                    return
                run_id = self._owed.pop()
            try:
                self._grade_one(run_id)
            except (GaveWay, RunBusy):
                with self._guard:
                    self._owed.add(run_id)
                return

    def _grade_one(self, run_id: str) -> None:
        cancel = Cancellation()
        self._take(run_id, cancel)
        with self._held(run_id) as locked:
            if not locked:
                return  # another process drives it now: it grades it
            values = cast(ResearchState, self.graph.get_state(run_config(run_id)).values)
            if values.get("grade_owed"):
                update = late_grade(values, self.services, cancel if self.yielding else None)
                self.graph.update_state(run_config(run_id), update, as_node="critique")

    def close(self) -> None:
        """Let a grade in progress give way and end (before the store closes)."""
        self.make_way()
        grader = self._grader
        if grader is not None:
            grader.join(timeout=10)
