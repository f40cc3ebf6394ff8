"""Research runs as a service: start, stream, resume, read and list them.

One object the CLI, the HTTP API and the app share. It turns the graph's stream into simple
items: ``("run", {run_id, question})`` first, then ``("event", entry)`` as steps happen,
``("report", payload)`` when the report is published (the critique follows) and
``("final", payload)`` at the end. Run ids follow the session-id rule (:mod:`local2.ids`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import StreamMode
from typing_extensions import Unpack

from local2.config import Settings, load_settings
from local2.contracts.people import LOCAL, Person
from local2.contracts.research import ResearchPayload, ResearchRun, RunStatus
from local2.contracts.stream import ResearchItem, collect_research
from local2.errors import RunBusy
from local2.graph.context import TurnContext
from local2.graph.services import Services
from local2.ids import check_session_id, new_run_id
from local2.research.graph import compile_research_graph, research_services
from local2.research.payload import research_payload
from local2.research.state import ResearchState
from local2.service.access import Access, no_run
from local2.service.wiring import ModelParts, wire
from local2.storage.bundles import ResearchStorage
from local2.storage.open import open_research_storage

RUN_MODES: list[StreamMode] = ["custom", "values"]


def _config(run_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}


def _finished(snapshot: Any) -> bool:
    """Nothing left to run: no next node and no pending task (steps handed out by ``Send``
    are tasks, not ``next``)."""
    return not snapshot.next and not snapshot.tasks


class Research:
    """Research runs over the agent's services, checkpointed where ``system.checkpointer``
    says (:mod:`local2.storage.open`)."""

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
        self.graph = compile_research_graph(self.services, self.checkpointer)
        self.context = TurnContext(self.services)
        self._running: set[str] = set()
        self._guard = threading.Lock()

    # -- runs ------------------------------------------------------------------------------

    def stream(
        self,
        question: str,
        *,
        max_rounds: int | None = None,
        run_id: str | None = None,
        person: Person = LOCAL,
    ) -> Iterator[ResearchItem]:
        """Start a run, ``person``'s; the question is checked before anything runs."""
        from local2.errors import InvalidQuery
        from local2.graph.question import validate_query

        problem = validate_query(question, self.settings.generator.max_query_chars)
        if problem:
            raise InvalidQuery(problem)
        run_id = check_session_id(run_id, "run id") if run_id else new_run_id()
        if self.graph.get_state(_config(run_id)).values:
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
        }
        return self._drive(graph_input, run_id, question.strip(), owner=person.name)

    def resume(self, run_id: str, person: Person = LOCAL) -> Iterator[ResearchItem]:
        """Continue ``person``'s run from its last finished step (a finished run is just
        returned)."""
        check_session_id(run_id, "run id")
        snapshot = self.graph.get_state(_config(run_id))
        owner = self.owner_of(run_id, snapshot.values)
        if not snapshot.values or not person.owns(owner):
            raise no_run(run_id)
        question = snapshot.values.get("question", "")
        return self._drive(None, run_id, question, snapshot, owner=owner)

    def owner_of(self, run_id: str, values: dict[str, Any] | None = None) -> str:
        """Whose run this is (runs from before people were configured are local's)."""
        if values and values.get("owner"):
            return str(values["owner"])
        return str((self.index.get(run_id) or {}).get("owner") or LOCAL.name)

    def _drive(
        self,
        graph_input: ResearchState | None,
        run_id: str,
        question: str,
        snapshot: Any = None,
        owner: str = LOCAL.name,
    ) -> Iterator[ResearchItem]:
        with self._claim(run_id):
            yield ("run", {"run_id": run_id, "question": question, "resumed": snapshot is not None})
            if snapshot is not None and _finished(snapshot):
                yield ("final", research_payload(dict(snapshot.values)))
                return
            self.index.start(run_id, question, self.services.model_name, owner)
            final = cast(ResearchState, {})  # the last values, once the run has any
            status = "interrupted"
            try:
                for part in self.graph.stream(
                    graph_input,
                    _config(run_id),
                    context=self.context,  # passed again on a resume: LangGraph keeps none
                    stream_mode=RUN_MODES,
                    durability="sync",
                ):
                    mode, data = cast(tuple[str, Any], part)
                    if mode == "custom":
                        if "event" in data:
                            yield ("event", data["event"])
                        if "payload" in data:
                            yield ("report", data["payload"])
                    else:
                        final = data
                status = "done" if final.get("report") else "unfinished"
            except Exception:
                status = "failed"
                raise
            finally:
                self.index.set_status(run_id, status)
            yield ("final", research_payload(final))

    @contextmanager
    def _claim(self, run_id: str) -> Iterator[None]:
        """The run is this process's until it ends; every other process is refused it too."""
        with self._guard:
            if run_id in self._running:
                raise RunBusy(f"Run {run_id} is already running.")
            self._running.add(run_id)
        try:
            if not self.storage.locks.acquire(run_id, blocking=False):
                raise RunBusy(f"Run {run_id} is already running in another process.")
            try:
                yield
            finally:
                self.storage.locks.release(run_id)
        finally:
            with self._guard:
                self._running.discard(run_id)

    def run(
        self,
        question: str,
        *,
        max_rounds: int | None = None,
        on_item: Callable[[str, Any], None] | None = None,
        person: Person = LOCAL,
    ) -> ResearchPayload:
        """Run to the end and return the payload."""
        return collect_research(
            self.stream(question, max_rounds=max_rounds, person=person), on_item
        )

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
        snapshot = self.graph.get_state(_config(run_id))
        if not snapshot.values:
            raise no_run(run_id)
        owner = self.owner_of(run_id, snapshot.values)
        (access or Access(None)).read(person, "research", run_id, owner, no_run)
        payload = research_payload(dict(snapshot.values))
        payload["status"] = self._status(run_id, snapshot)
        return payload

    def found(self, run_id: str) -> list[dict[str, Any]]:
        """Every source the run has found or read so far (the whole ledger), by number."""
        from local2.research.ledger import source_list

        values = self.graph.get_state(_config(run_id)).values or {}
        return source_list(values.get("ledger") or [])

    def _status(self, run_id: str, snapshot: Any) -> RunStatus:
        if run_id in self._running:
            return "running"
        if _finished(snapshot):
            return "done"
        known = self.index.get(run_id) or {}
        if known.get("status") == "running" and self.storage.locks.held_elsewhere(run_id):
            return "running"  # in another process sharing the database
        return "failed" if known.get("status") == "failed" else "unfinished"

    def runs(self, limit: int = 20, owner: str | None = LOCAL.name) -> list[ResearchRun]:
        """Recent runs of ``owner`` (None: everyone's), newest first, with their state
        (``unfinished`` ones can be resumed)."""
        rows: list[dict[str, Any]] = []
        for row in self.index.recent(limit, owner):
            snapshot = self.graph.get_state(_config(row["run_id"]))
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
        return cast(list[ResearchRun], rows)  # the index's row with the run's progress

    def close(self) -> None:
        self.storage.close()
        for owned in self._owned:
            owned.close()
