"""Tool calls that wait for the person: what a paused turn waits on, and its answer.

A turn pauses (LangGraph ``interrupt``) when a call must be approved and no one at hand can be
asked (:mod:`local2.contracts.approval`). The person's decision resumes it, under the
session's lock like any turn; it may pause again on the next call.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from langgraph.types import Command

from local2.contracts import (
    Approver,
    Decision,
    PendingApproval,
    StreamItem,
    TurnPayload,
    approval,
    collect_turn,
)
from local2.errors import UnknownTurn
from local2.graph import TurnGraph
from local2.ids import check_session_id
from local2.service.chat._running import GraphRuns, RunningTurn, Turns, pending_in, thread_config


@dataclass(eq=False)
class Approvals:
    """Answers the approval requests of paused turns."""

    graph: TurnGraph
    running: Turns
    runs: GraphRuns

    def pending(self, session_id: str) -> PendingApproval | None:
        """The request a paused turn of this session waits on, or None.

        ``interrupt_id`` names it: a compare turn can wait on both respondents at once, and
        each request is answered in turn.
        """
        return pending_in(self.graph.get_state(thread_config(session_id)))

    def resume(
        self,
        session_id: str,
        decision: Decision,
        approve: Approver | None = None,
        by: str = approval.PERSON,
    ) -> Iterator[StreamItem]:
        """Continue a paused turn with the person's decision (all calls, or per call id)."""
        session_id = check_session_id(session_id)  # once: the run below is handed it checked

        def produce(turn: RunningTurn) -> Iterator[StreamItem]:
            waiting = self.pending(session_id)
            if waiting is None:
                raise UnknownTurn(f"Nothing in session '{session_id}' is waiting for approval")
            answer = approval.answer(waiting, decision, by=by)
            resume: Command[Any] = Command(resume={waiting["interrupt_id"]: answer})
            yield from self.runs.run(resume, thread_config(session_id), turn, approve)

        yield from self.running.run(session_id, produce)

    def decide(
        self, session_id: str, decision: Decision, approve: Approver | None = None
    ) -> TurnPayload:
        """:meth:`resume` to the end; returns the payload (which may wait again)."""
        return collect_turn(self.resume(session_id, decision, approve))
