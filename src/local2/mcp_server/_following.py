"""Following a research run from an MCP tool call: its steps as progress notifications,
its end as the tool's result, and the client's cancellation as the person's Stop.

The run is driven in a worker thread (the service is synchronous); each step's event is sent
to the client as a ``notifications/progress`` from there. When the client cancels the call
(``notifications/cancelled``), the run is told to stop exactly as ``POST
/research/{id}/steer {stop: "run"}`` tells it: it stops at its next step boundary and writes
its report from what was read, in the worker, while the cancelled call returns at once. A
call cancelled before the run can be told (its id not yet named, nothing checkpointed) has
it told by the worker at the run's next item, so no cancelled run goes on to its end.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.to_thread

from local2 import events
from local2.contracts import STOP_RUN, Person, ResearchItem, ResearchPayload, collect_research
from local2.errors import Local2Error, NotFound

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent

log = logging.getLogger(__name__)
Progress = Callable[[float, float | None, str | None], Coroutine[Any, Any, None]]
STARTED_WAIT_S = 60.0  # how long a run started in the background may take to name its id


def progress_note(kind: str, data: Any) -> str | None:
    """What one item of a run says to a client following it (None: nothing)."""
    if kind == "run":
        return f"run {data.get('run_id')} started: {data.get('question', '')}"
    if kind == "awaiting_input":
        return f"waits for {data.get('waits_for')}: answer with research_input"
    if kind == "report":
        return "report written; verifying and grading"
    if kind != "event":
        return None
    subject = str(data.get("subject", ""))
    if subject == events.RESEARCH_STEP:
        what = data.get("description") or data.get("tool") or ""
        return f"step {data.get('id')} {data.get('status')}" + (f": {what}" if what else "")
    if subject == events.RESEARCH_PLAN:
        return f"plan: {len(data.get('steps') or [])} steps"
    if subject in (events.RESEARCH_ROUND, events.RESEARCH_REPLAN, events.RESEARCH_STEER):
        return subject.removeprefix("research.")
    return None


@dataclass
class Following:
    """One run followed by one call: its id once known, whether the call was cancelled, and
    whether the run has been told to stop (``stop``: tell it; False while it cannot be told
    yet, so that it is told at its next item)."""

    stop: Callable[[str], bool] = field(default=lambda run_id: True)
    run_id: str | None = None
    cancelled: bool = False
    stopped: bool = False
    notes: int = 0
    named: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on_item(self, kind: str, data: Any, progress: Progress | None) -> None:
        """From the worker: note the run's id, stop a run whose call was cancelled, send the
        step as progress."""
        if kind == "run":
            self.run_id = str(data.get("run_id"))
            self.named.set()
        self.stop_if_cancelled()
        note = progress_note(kind, data)
        if note is None or progress is None or self.cancelled:
            return
        self.notes += 1
        try:
            anyio.from_thread.run(progress, float(self.notes), None, note)
        except Exception as exc:  # a client gone away: the run goes on regardless
            log.debug("progress not sent: %s: %s", type(exc).__name__, exc)

    def cancel(self) -> None:
        """The call was cancelled: stop the run now, or, before it has a state to stop (its
        id not yet named, nothing checkpointed), at its next item."""
        with self.lock:
            self.cancelled = True
        self.stop_if_cancelled()

    def stop_if_cancelled(self) -> None:
        with self.lock:
            if self.cancelled and not self.stopped and self.run_id is not None:
                self.stopped = self.stop(self.run_id)


async def follow(
    agent: Agent,
    person: Person,
    items: Iterator[ResearchItem],
    progress: Progress | None,
) -> ResearchPayload:
    """Drive ``items`` to the end, sending each step to ``progress``; cancelled, the run is
    stopped as the person's Stop stops it (and finishes in its worker), however early."""
    following = Following(stop=lambda run_id: stop_run(agent, run_id, person))

    def drive() -> ResearchPayload:
        try:
            return collect_research(items, lambda k, d: following.on_item(k, d, progress))
        finally:  # cancelled as the run paused or ended: a pause is ended too
            following.stop_if_cancelled()

    try:
        return await anyio.to_thread.run_sync(drive, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(following.cancel)
        raise


def stop_run(agent: Agent, run_id: str, person: Person) -> bool:
    """``POST /research/{run_id}/steer {stop: "run"}``, for a call the client cancelled:
    True once said (or nothing is left to stop), False while the run has no state yet."""
    try:
        agent.research.steer(run_id, {"stop": STOP_RUN}, person)
    except NotFound:
        return False  # named, but not checkpointed yet: said at its next item
    except Local2Error:
        return True  # finished meanwhile: nothing left to stop
    return True


def in_background(items: Iterator[ResearchItem]) -> str:
    """Start driving ``items`` in a thread of its own and return the run's id once named
    (the run goes on; research_status and research_result follow it)."""
    following = Following()
    failed: list[BaseException] = []

    def drive() -> None:
        try:
            collect_research(items, lambda k, d: following.on_item(k, d, None))
        except BaseException as exc:  # told through research_status; logged here
            failed.append(exc)
            following.named.set()
            log.warning("background research run failed: %s: %s", type(exc).__name__, exc)

    threading.Thread(target=drive, name="mcp-research", daemon=True).start()
    following.named.wait(STARTED_WAIT_S)
    if following.run_id is None:
        if failed:
            raise failed[0]
        raise TimeoutError("the research run did not start")
    return following.run_id
