"""Running a research run: one at a time per run, its stream as items, its pauses.

:class:`RunDriver` is what :class:`~local2.service.research.Research` runs a run with, for
every way a run goes on (a start, a resume, an answer to a pause, a follow-up): the run is
this process's while it runs (and, on Postgres, no other process's), the graph's stream
becomes items, and a pause (LangGraph ``interrupt``) ends the items with
``awaiting_input`` and a ``final`` payload saying so, unless someone at hand answers it
(the CLI's terminal).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, StreamMode

from local2.contracts import LOCAL, ResearchInput, ResearchItem, ResearchPayload
from local2.errors import InvalidInput, RunBusy
from local2.graph import Services
from local2.research import (
    ResearchContext,
    ResearchGraph,
    ResearchState,
    finished_status,
    research_payload,
)
from local2.service.research_input import check_input, pending_request
from local2.storage import ResearchStorage

RUN_MODES: list[StreamMode] = ["custom", "values"]
# Answers a pause on the spot (the CLI's terminal); None leaves the run paused.
Answerer = Callable[[dict[str, Any]], ResearchInput | None]


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
    contexts: dict[str, Any] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def awaiting(self, run_id: str) -> dict[str, Any] | None:
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
        with self.claim(run_id):
            yield ("run", {"run_id": run_id, "question": question, "resumed": snapshot is not None})
            if snapshot is not None and finished(snapshot):
                yield ("final", research_payload(dict(snapshot.values)))
                return
            self.storage.index.start(run_id, question, self.services.model_name, owner)
            final = cast(ResearchState, {})  # the last values, once the run has any
            status = "interrupted"
            try:
                while True:
                    final, paused = yield from self._run(graph_input, run_id, final)
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
            yield ("final", research_payload(final))

    def _run(
        self, graph_input: Any, run_id: str, final: ResearchState
    ) -> Generator[ResearchItem, None, tuple[ResearchState, bool]]:
        """One graph run's items; returns (``yield from``) its last values, and whether it
        paused (LangGraph's ``__interrupt__`` in the values: only then is the state read)."""
        paused = False
        for part in self.graph.stream(
            graph_input,
            run_config(run_id),
            context=self.contexts.get(run_id, self.context),  # again on a resume: none kept
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
        self, run_id: str, request: dict[str, Any], answer: Answerer | None
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

    def _paused(self, final: ResearchState, request: dict[str, Any]) -> ResearchPayload:
        payload = research_payload(final)
        payload["status"] = "awaiting_input"
        payload["awaiting"] = cast(Any, request)
        return payload

    @contextmanager
    def claim(self, run_id: str) -> Iterator[None]:
        """The run is this process's until it ends; every other process is refused it too."""
        with self._guard:
            if run_id in self.running:
                raise RunBusy(f"Run {run_id} is already running.")
            self.running.add(run_id)
        try:
            if not self.storage.locks.acquire(run_id, blocking=False):
                raise RunBusy(f"Run {run_id} is already running in another process.")
            try:
                yield
            finally:
                self.storage.locks.release(run_id)
        finally:
            with self._guard:
                self.running.discard(run_id)
