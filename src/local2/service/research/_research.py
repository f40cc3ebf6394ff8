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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import suppress
from typing import Any, Literal, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command
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
    RunStatus,
    Steer,
    SteerRecord,
    collect_research,
)
from local2.errors import RunBusy
from local2.graph import Services
from local2.ids import check_session_id, new_run_id
from local2.library import ReadingLibrary
from local2.research import (
    ResearchContext,
    ResearchState,
    compile_research_graph,
    finished_status,
    research_payload,
    research_services,
)
from local2.service.access import Access, no_run
from local2.service.research._driver import Answerer, RunDriver, finished, run_config
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
from local2.service.research._library_runs import RunSources, keep_note
from local2.service.wiring import ModelParts, wire
from local2.storage import ResearchStorage, open_research_storage

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
        from local2.errors import InvalidQuery
        from local2.graph import validate_query

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
        from local2.errors import InvalidQuery
        from local2.graph import validate_query

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
        from local2.research import source_list

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
