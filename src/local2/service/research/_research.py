"""Research runs as a service: start, stream, resume, steer, read and list them.

One object the CLI, the HTTP API and the app share. It turns the graph's stream into simple
items: ``("run", {run_id, question})`` first, then ``("event", entry)`` as steps happen,
``("report", payload)`` when the report is published (the critique follows), ``("followup",
record)`` when a follow-up is answered, and ``("final", payload)`` at the end; a run that
pauses for the person hands out ``("awaiting_input", request)`` before its ``final`` (status
``awaiting_input``). Run ids follow the session-id rule (:mod:`local2.ids`).

The person steers a run four ways (docs/architecture.md, "Research"): :meth:`Research.input`
answers a pause (its plan, a clarifying question, or ``{stop: true}``) and streams the rest
of the run; :meth:`Research.steer` puts a say in a running run's inbox (``{stop: "run"}``
also ends a paused run); :meth:`Research.followup` asks
a follow-up on a finished report; ``stream(..., clarify="auto", review=True, plan=...)``
asks for the pauses, or gives the plan, when a run starts.

The driver (:class:`RunDriver`): running a research run, one at a time per run, its stream
as items, its pauses.

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

The library's part (:class:`RunSources`, docs/library.md): a run's sources (``web``, ``library`` or
``both``), what it keeps (``library.keep``, or its own ``keep``), and, when it ends, its
citations recorded on the entries it read.

A run from the library gets services of its own whose ``web_search`` and ``web_fetch`` are
the library's (:func:`local2.tools._library_tools.library_sourced`); with ``library`` no
tool that reaches outside is left, so the run opens no connection.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, StreamMode
from typing_extensions import Unpack

from local2.config import Settings, load_settings
from local2.contracts import (
    LOCAL,
    STOP_RUN,
    Keep,
    PendingInput,
    Person,
    PlanEdit,
    ResearchInput,
    ResearchItem,
    ResearchPayload,
    ResearchRun,
    ResearchSource,
    RunItem,
    RunScope,
    RunStatus,
    Sources,
    Steer,
    SteerRecord,
    collect_research,
)
from local2.errors import GaveWay, InvalidInput, InvalidQuery, RunBusy
from local2.graph import Services, validate_query
from local2.ids import check_session_id, new_run_id
from local2.library import ReadingLibrary
from local2.models import Cancellation
from local2.research import (
    ResearchContext,
    ResearchGraph,
    ResearchState,
    compile_research_graph,
    finished_status,
    late_grade,
    research_payload,
    research_services,
    source_list,
)
from local2.service.access import Access, no_run
from local2.service.research._exports import Exported, export_format, export_run
from local2.service.research._input import (
    check_input,
    check_plan_edit,
    check_steer,
    not_ready,
    pending_request,
    read_input,
    read_plan,
    read_steer,
)
from local2.service.wiring import ModelParts, wire
from local2.storage import ResearchStorage, SteerInbox, open_research_storage
from local2.tools import (
    Scope,
    library_sourced,
    parse_day,
    parse_scope,
    parse_sources,
    sourced_tools,
)

Clarify = Literal["auto", "never"]  # auto: the planner may ask one question before planning


def _indexed(storage: ResearchStorage, run_id: str, key: Literal["owner", "status"]) -> str | None:
    """What the run index says of ``run_id`` (None: it does not know the run)."""
    row = storage.index.get(run_id)
    return row[key] if row else None


class Research:
    """Research runs over the agent's services, checkpointed where ``system.checkpointer``
    says (:mod:`local2.storage._open`)."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        services: Services | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        **parts: Unpack[ModelParts],
    ) -> None:
        """Over ``services`` (the agent's), or over parts wired here from settings; runs are
        checkpointed by ``checkpointer``, default where ``system.checkpointer`` says."""
        self.settings = settings or load_settings()
        self.notice = parts.get("notice")
        self._owned: list[Any] = []  # what this service opened itself, closed with it
        if services is None:
            wired = wire(self.settings, **parts)
            services = wired.services
            self.notice = wired.model_notice
            self._owned.append(wired.storage)
        self.services = research_services(services)  # read-only tools: research causes no effects
        self.storage: ResearchStorage = open_research_storage(self.settings, checkpointer)
        self.checkpointer = self.storage.checkpointer
        self.index = self.storage.index
        self.inbox = self.storage.inbox
        self.graph = compile_research_graph(self.services, self.checkpointer, self.inbox)
        self.context = ResearchContext(self.services, inbox=self.inbox)
        self.driver = RunDriver(
            self.graph,
            self.context,
            self.storage,
            self.services,
            yielding=self.settings.critic.yield_to_new_turns,
        )
        self.library = ReadingLibrary.shared(self.settings)  # what runs read, kept
        # Where each run looks and what it keeps (docs/library.md), while it runs here.
        self.sourcing = RunSources(self.library, self.driver, self.services, self.inbox)

    # -- runs ------------------------------------------------------------------------------

    def stream(
        self,
        question: str,
        *,
        max_rounds: int | None = None,
        run_id: str | None = None,
        person: Person = LOCAL,
        clarify: Clarify = "never",
        review: bool = False,
        plan: PlanEdit | dict[str, Any] | str | None = None,  # dict: the person's JSON
        answer: Answerer | None = None,
        sources: str | Sequence[str] | None = None,
        keep: Keep | None = None,
        scope: Mapping[str, Any] | None = None,
    ) -> Iterator[ResearchItem]:
        """Start a run, ``person``'s; the question (and a ``plan`` given) is checked before
        anything runs. ``clarify="auto"``: the planner may ask one question first;
        ``review``: the run pauses with its plan before the first search; ``plan``: the
        person's own (sub-questions, or a whole plan), run as given; ``answer``: who answers
        a pause at once (none: the stream ends at the pause, see :meth:`input`); ``sources``
        and ``keep``: where it looks (``web,arxiv,library``; none: ``research.sources``) and
        what it keeps; ``scope``: ``since``, ``until``, ``domains``, ``exclude_domains``
        (each not given: ``research.<key>``) (:class:`RunSources`)."""

        problem = validate_query(question, self.settings.generator.max_query_chars)
        if problem:
            raise InvalidQuery(problem)
        run_id = check_session_id(run_id, "run id") if run_id else new_run_id()
        if self.graph.get_state(run_config(run_id)).values:
            if not person.owns(self.owner_of(run_id)):
                raise no_run(run_id)  # someone else's: as if there were none
            raise RunBusy(f"Run {run_id} exists already: resume it, or pick another id.")
        rounds = max_rounds or self.settings.research.max_rounds
        graph_input: ResearchState = {
            "question": question.strip(),
            "run_id": run_id,
            "max_rounds": rounds,
            "trust_urls": self.settings.tools.approval == "never",
            "started_at": time.time(),
            "round": 1,
            "owner": person.name,
            "model": self.services.model_name,
            "backend": self.services.backend,
            "clarify": clarify,
            "review": review,
        }
        if plan is not None:
            given = read_plan(plan)
            check_plan_edit({"question": question.strip(), "round": 1}, given, self.services, False)
            graph_input["given_plan"] = given.model_dump(exclude_none=True)
        checked = self.sourcing.begin(run_id, graph_input, sources, keep, scope)
        items = self.driver.drive(
            graph_input, run_id, question.strip(), owner=person.name, answer=answer
        )
        return self.sourcing.noting(items, person.name, checked)

    def keeps(self, run_id: str | None = None) -> str:
        """What a run (``None``: one started now) keeps, in words."""
        return keep_note(self.library, run_id or "")

    def resume(
        self, run_id: str, person: Person = LOCAL, answer: Answerer | None = None
    ) -> Iterator[ResearchItem]:
        """Continue ``person``'s run from its last finished step (a finished run is just
        returned; a paused one pauses again, or ``answer`` answers it)."""
        snapshot, owner = self._own(run_id, person)
        question = snapshot.values.get("question", "")
        self.sourcing.as_begun(run_id, snapshot.values)
        items = self.driver.drive(None, run_id, question, snapshot, owner=owner, answer=answer)
        return self.sourcing.noting(items, owner)

    def input(
        self,
        run_id: str,
        value: ResearchInput | Mapping[str, Any],  # the person's JSON, checked here
        person: Person = LOCAL,
        answer: Answerer | None = None,
    ) -> Iterator[ResearchItem]:
        """Answer ``person``'s paused run (``{approve}``, ``{plan}`` or ``{answer}``) and
        stream the rest of it. Checked first: an input the pause cannot take, or a plan that
        breaks the rules, raises :class:`~local2.errors.InvalidInput` and the run stays
        paused as it was."""
        snapshot, owner = self._own(run_id, person)
        request = pending_request(snapshot)
        if request is None:
            raise not_ready(run_id, self._status(run_id, snapshot), "it waits for no input")
        given = read_input(value)
        check_input(run_id, request, given, cast(ResearchState, snapshot.values), self.services)
        resume: Command[Any] = Command(
            resume={request["interrupt_id"]: given.model_dump(exclude_none=True)}
        )
        question = snapshot.values.get("question", "")
        self.sourcing.as_begun(run_id, snapshot.values)
        items = self.driver.drive(resume, run_id, question, owner=owner, answer=answer)
        return self.sourcing.noting(items, owner)

    def steer(
        self, run_id: str, say: Steer | Mapping[str, Any], person: Person = LOCAL
    ) -> SteerRecord:
        """Put a say in ``person``'s running run's inbox (``{text}``, ``{add}``, ``{drop}``
        or ``{stop}``); the run applies it at its next step boundary, in whichever process
        runs it, and shows it in its event log. ``{stop: "run"}`` also ends a paused run:
        it leaves its pause (``{stop: true}``) and its report is written, from what was
        read, before this returns."""
        snapshot, _owner = self._own(run_id, person)
        status = self._status(run_id, snapshot)
        given = read_steer(say)
        stops_run = given.kind == "stop" and given.value == STOP_RUN
        stops_pause = status == "awaiting_input" and stops_run
        if status != "running" and not stops_pause:
            raise not_ready(run_id, status, "a say reaches only a running run")
        check_steer(run_id, given, cast(ResearchState, snapshot.values))
        record = self.inbox.put(run_id, given.kind, given.value)
        if stops_pause:
            # Answered meanwhile (RunBusy): the run now going applies the say at its next step.
            with suppress(RunBusy):
                collect_research(self.input(run_id, ResearchInput(stop=True), person))
        return record

    def followup(
        self, run_id: str, question: str, person: Person = LOCAL
    ) -> Iterator[ResearchItem]:
        """Ask a follow-up on ``person``'s finished report, in the run's own thread: answered
        from its ledger, searching only for what the ledger lacks."""

        problem = validate_query(question, self.settings.generator.max_query_chars)
        if problem:
            raise InvalidQuery(problem)
        snapshot, owner = self._own(run_id, person)
        if run_id in self.driver.running and snapshot.values.get("report"):
            self.driver.wait_ended(run_id)  # published, grading: its critic gives way
            snapshot, owner = self._own(run_id, person)
        status = self._status(run_id, snapshot)
        if status not in ("done", "stopped") or not snapshot.values.get("report"):
            raise not_ready(run_id, status, "follow-ups are asked on a finished report")
        graph_input = {"followup": " ".join(question.split())}
        self.sourcing.as_begun(run_id, snapshot.values)
        items = self.driver.drive(
            graph_input, run_id, snapshot.values.get("question", ""), owner=owner
        )
        return self.sourcing.noting(items, owner)

    def awaiting(self, run_id: str) -> PendingInput | None:
        """What the run waits for (its plan, or an answer), or None."""
        return self.driver.awaiting(check_session_id(run_id, "run id"))

    def _own(self, run_id: str, person: Person) -> tuple[Any, str]:
        """The run's latest state and owner; someone else's run is as unknown as none."""
        check_session_id(run_id, "run id")
        snapshot = self.graph.get_state(run_config(run_id))
        owner = self.owner_of(run_id, cast(ResearchState, snapshot.values))
        if not snapshot.values or not person.owns(owner):
            raise no_run(run_id)
        return snapshot, owner

    def owner_of(self, run_id: str, values: ResearchState | None = None) -> str:
        """Whose run this is (runs from before people were configured are local's)."""
        if values and values.get("owner"):
            return str(values["owner"])
        return str(_indexed(self.storage, run_id, "owner") or LOCAL.name)

    def run(
        self,
        question: str,
        *,
        max_rounds: int | None = None,
        on_item: Callable[[str, Any], None] | None = None,
        person: Person = LOCAL,
        sources: str | Sequence[str] | None = None,
        keep: Keep | None = None,
        scope: Mapping[str, Any] | None = None,
    ) -> ResearchPayload:
        """Run to the end and return the payload."""
        items = self.stream(
            question, max_rounds=max_rounds, person=person, sources=sources, keep=keep, scope=scope
        )
        return collect_research(items, on_item)

    def resume_run(
        self,
        run_id: str,
        on_item: Callable[[str, Any], None] | None = None,
        person: Person = LOCAL,
    ) -> ResearchPayload:
        return collect_research(self.resume(run_id, person), on_item)

    # -- reading ---------------------------------------------------------------------------

    def payload(
        self, run_id: str, person: Person = LOCAL, access: Access | None = None
    ) -> ResearchPayload:
        """The run's payload so far, for its owner (or an admin, through ``access``)."""
        check_session_id(run_id, "run id")
        snapshot = self.graph.get_state(run_config(run_id))
        if not snapshot.values:
            raise no_run(run_id)
        owner = self.owner_of(run_id, cast(ResearchState, snapshot.values))
        (access or Access(None)).read(person, "research", run_id, owner, no_run)
        payload = research_payload(dict(snapshot.values))
        payload["status"] = self._status(run_id, snapshot)
        payload["awaiting"] = pending_request(snapshot)
        return payload

    def export(
        self, run_id: str, fmt: str, person: Person = LOCAL, access: Access | None = None
    ) -> Exported:
        """The run's references as ``fmt`` (bibtex, ris, csl) or its report (md), for its
        owner; another person's run is as unknown as none (404)."""
        export_format(fmt)  # an unknown format is refused before the run is looked up
        return export_run(self.payload(run_id, person, access), fmt)

    def found(self, run_id: str) -> list[ResearchSource]:
        """Every source the run has found or read so far (the whole ledger), by number."""

        values = self.graph.get_state(run_config(run_id)).values or {}
        return source_list(values.get("ledger") or [])

    def _status(self, run_id: str, snapshot: Any) -> RunStatus:
        if run_id in self.driver.running:
            return "running"
        if pending_request(snapshot) is not None:
            return "awaiting_input"
        if finished(snapshot):
            return finished_status(snapshot.values)
        status = _indexed(self.storage, run_id, "status")
        if status == "running" and self.storage.locks.held_elsewhere(run_id):
            return "running"  # in another process sharing the database
        return "failed" if status == "failed" else "unfinished"

    def runs(self, limit: int = 20, owner: str | None = LOCAL.name) -> list[ResearchRun]:
        """Recent runs of ``owner`` (None: everyone's), newest first, with their state
        (``unfinished`` ones can be resumed)."""
        rows: list[ResearchRun] = []
        for row in self.index.recent(limit, owner):
            snapshot = self.graph.get_state(run_config(row["run_id"]))
            values = snapshot.values or {}
            steps = values.get("steps") or {}
            done = sum(1 for s in steps.values() if s.get("status") == "done")
            rows.append(
                {
                    **row,
                    "status": self._status(row["run_id"], snapshot),
                    "steps_done": done,
                    "steps": len(steps),
                    "sources": len(values.get("ledger") or []),
                }
            )
        return rows

    def make_way(self) -> None:
        """The person asked something (a chat turn): a run's critic gives way, its grade owed."""
        self.driver.make_way()

    def close(self) -> None:
        self.library.settle()  # what the runs kept, indexed before the process may end
        self.driver.close()
        self.storage.close()
        for owned in self._owned:
            owned.close()


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


SOURCES: tuple[Sources, ...] = ("web", "library", "both")
KEEPS: tuple[Keep, ...] = ("all", "research", "off")
_CITE = re.compile(r"\[(\d+)\]")


def check_sources(sources: str) -> Sources:
    for known in SOURCES:
        if sources == known:
            return known
    raise InvalidInput(f"Unknown sources {sources!r}.", "Use web, library or both.")


ScopeAsked = Mapping[str, Any]  # since, until, domains, exclude_domains, as a person gave them
SCOPE_KEYS = ("since", "until", "domains", "exclude_domains")
# A later ``since`` for the first round alone (a watch's run: what appeared since the last one)
FIRST_ROUND = "first_round_since"


def looks_in_of(names: Sequence[str]) -> Sources:
    """``web|library|both`` of the sources named (what the library's rules read)."""
    if "library" not in names:
        return "web"
    return "library" if len(names) == 1 else "both"


def run_sources(value: str | Sequence[str] | None, settings: Settings) -> tuple[str, ...]:
    """The sources a run searches: those given (``web,arxiv``, or ``web|library|both``), else
    ``research.sources``; an unknown one is refused with the known ones."""
    return parse_sources(value if value else list(settings.research.sources))


def first_round_since(value: object, scope: Scope) -> date | None:
    """The day the first round looks from (``value``: an ISO date), or ``None`` when it
    narrows nothing: no day given, one not after the scope's own ``since``, or one after its
    ``until`` (the person's own window holds: a window that ended is not looked past)."""
    if value in (None, ""):
        return None
    day = value if isinstance(value, date) else parse_day(str(value), FIRST_ROUND, end=False)
    if scope.since is not None and day <= scope.since:
        return None
    if scope.until is not None and day > scope.until:
        return None
    return day


def first_round_said(day: date) -> str:
    return f"The first round looks only at sources published on or after {day.isoformat()}."


def run_scope(asked: ScopeAsked | None, settings: Settings) -> RunScope | None:
    """A run's scope as given (each key left out: ``research.<key>``), checked, its relative
    dates resolved to days; ``None`` when it has none. ``first_round_since`` narrows the
    first round alone (:func:`first_round_since`); every round keeps the rest."""
    research = settings.research
    given = {k: v for k, v in (asked or {}).items() if k in SCOPE_KEYS and v not in (None, "", [])}
    values = {k: given.get(k, getattr(research, k)) for k in SCOPE_KEYS}
    scope = parse_scope(**values)
    first = first_round_since((asked or {}).get(FIRST_ROUND), scope)
    if not (scope.timed or scope.placed or first):
        return None
    said = scope.describe()
    record = RunScope(
        since=scope.since.isoformat() if scope.since else None,
        until=scope.until.isoformat() if scope.until else None,
        domains=list(scope.domains),
        exclude_domains=list(scope.exclude_domains),
        said=" ".join(p for p in (said, first_round_said(first) if first else "") if p),
    )
    if first is not None:
        record["first_round_since"] = first.isoformat()
    return record


def scope_of(record: RunScope | None) -> Scope:
    """The :class:`Scope` a run's record says for every round (an empty one for none)."""
    if not record:
        return Scope()
    return parse_scope(
        record.get("since"),
        record.get("until"),
        record.get("domains"),
        record.get("exclude_domains"),
    )


def first_scope_of(record: RunScope | None) -> Scope | None:
    """The first round's :class:`Scope` when it is narrower than the rest's, else ``None``."""
    first = record.get("first_round_since") if record else None
    if not first:
        return None
    return dataclasses.replace(scope_of(record), since=date.fromisoformat(str(first)))


def check_keep(keep: object) -> Keep:
    for known in KEEPS:
        if keep == known:
            return known
    raise InvalidInput(f"Unknown keep {keep!r}.", "Use all, research or off.")


def library_context(
    services: Services, library: ReadingLibrary, sources: Sources, inbox: SteerInbox | None
) -> ResearchContext:
    """The context a run from the library runs in: its tools the library's."""
    tools = library_sourced(services.tools, services.settings, services.backend, library, sources)
    return ResearchContext(dataclasses.replace(services, tools=tools), inbox=inbox)


def sourced_context(
    services: Services,
    library: ReadingLibrary,
    names: Sequence[str],
    scope: RunScope | None,
    inbox: SteerInbox | None,
) -> ResearchContext:
    """The context of a run told its sources by name or scoped: its ``web_search`` asks
    each of them within the scope (:func:`local2.tools.sourced_tools`)."""
    settings, backend = services.settings, services.backend
    tools = sourced_tools(
        services.tools,
        settings,
        backend,
        library,
        names,
        scope_of(scope),
        first_round=first_scope_of(scope),
    )
    return ResearchContext(dataclasses.replace(services, tools=tools), inbox=inbox)


def cited_urls(payload: Any) -> dict[str, list[int]]:
    """The URLs a report cites, each with its ``[n]`` numbers."""
    report = str(payload.get("report") or "")
    numbers = {int(n) for n in _CITE.findall(report.split("## References")[0])}
    cited: dict[str, list[int]] = {}
    for source in payload.get("sources") or []:
        if source.get("n") in numbers and source.get("url"):
            cited.setdefault(str(source["url"]), []).append(int(source["n"]))
    return cited


def noting_citations(
    items: Iterator[ResearchItem],
    library: ReadingLibrary,
    owner: str,
    sources: Sources | None = None,
    ended: Callable[[str], None] | None = None,
) -> Iterator[ResearchItem]:
    """``items`` as they come; a new run's first item says where it looks and what it keeps
    (``library``: its ``sources``, ``keep`` and a ``note`` in words); at the final payload,
    its citations are recorded on the library's entries the run read (none for a run that
    keeps nothing: it leaves no trace in the library). When the items end, ``ended(run_id)``
    (only if this stream ran the run: one refused as busy leaves the running one alone)."""
    run_id = ""
    try:
        for kind, value in items:
            if kind == "run":
                run_id = str(value.get("run_id") or "")
                if sources is not None and run_id:
                    mode = library.keep_mode(run_id)
                    note = keep_note(library, run_id)
                    value = {**value, "library": {"sources": sources, "keep": mode, "note": note}}
            elif kind == "final" and run_id and value.get("report") and keeps(library, run_id):
                library.cite(owner, run_id, cited_urls(value))
            yield kind, value
    finally:
        if run_id and ended is not None:
            ended(run_id)


def keeps(library: ReadingLibrary, run_id: str) -> bool:
    """Whether the run leaves anything in the library (kept off: no trace at all)."""
    return library.keep_mode(run_id) != "off"


def keep_note(library: ReadingLibrary, run_id: str) -> str:
    """What the run keeps, in words (a run kept off says so)."""
    mode = library.keep_mode(run_id)
    if mode == "off":
        return "Keeping nothing this run reads (library.keep: off)."
    return f"Keeping what this run reads in your library (library.keep: {mode})."


class RunSources:
    """Where each run running here looks and what it keeps: set when it starts (and kept in
    its state), set again from its state when it goes on (resumed, answered, followed up:
    in this process or another), forgotten when its stream ends."""

    def __init__(
        self, library: ReadingLibrary, driver: RunDriver, services: Services, inbox: SteerInbox
    ) -> None:
        self.library, self.driver, self.services, self.inbox = library, driver, services, inbox

    def begin(
        self,
        run_id: str,
        graph_input: ResearchState,
        sources: str | Sequence[str] | None,
        keep: Keep | None,
        scope: ScopeAsked | None = None,
    ) -> Sources:
        """A new run's ``sources`` (names, or ``web|library|both``; none: the settings'),
        ``scope`` and ``keep``, checked, in its first state and in force."""
        names = run_sources(sources, self.services.settings)
        record = run_scope(scope, self.services.settings)
        checked = looks_in_of(names)
        graph_input["looks_in"] = checked
        graph_input["looks_at"] = list(names)
        graph_input["scope"] = record
        if keep is not None:
            graph_input["keep"] = check_keep(keep)
        self._set(run_id, names, record, keep)
        return checked

    def as_begun(self, run_id: str, values: dict[str, Any]) -> None:  # a checkpoint's values
        """A run going on looks and keeps as it began."""
        keep = values.get("keep")
        looks_in = check_sources(str(values.get("looks_in") or "web"))
        names = values.get("looks_at") or parse_sources(looks_in)
        self._set(run_id, names, values.get("scope"), check_keep(keep) if keep else None)

    def _set(
        self, run_id: str, names: Sequence[str], scope: RunScope | None, keep: Keep | None
    ) -> None:
        """``library``: the person's library alone, no network; ``both``: the library first;
        other sources by name, or a scope: each searched within it; ``keep`` instead of
        ``library.keep`` (``off``: nothing)."""
        if keep is not None:
            self.library.run_keep[run_id] = keep
        plain = set(names) <= {"web", "library"} and not scope
        if plain and "library" in names:
            self.driver.contexts[run_id] = library_context(
                self.services, self.library, looks_in_of(names), self.inbox
            )
        elif not plain:
            self.driver.contexts[run_id] = sourced_context(
                self.services, self.library, names, scope, self.inbox
            )

    def ended(self, run_id: str) -> None:
        self.library.run_keep.pop(run_id, None)
        self.driver.contexts.pop(run_id, None)

    def noting(
        self, items: Iterator[ResearchItem], owner: str, sources: Sources | None = None
    ) -> Iterator[ResearchItem]:
        """The run's items (:func:`noting_citations`), forgotten here when they end."""
        return noting_citations(items, self.library, owner, sources, self.ended)
