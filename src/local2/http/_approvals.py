"""Tool calls waiting for the person, over HTTP: what a paused turn waits on, and the decision."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict

from local2.contracts import PendingApproval, TurnPayload
from local2.errors import InvalidInput
from local2.http._identity import Caller
from local2.http._openapi import returns
from local2.service import Agent


class ApprovalBody(BaseModel):
    """The person's decision on a paused turn: ``approve`` for every waiting call, or
    ``decisions`` per call id (a waiting call left out is denied)."""

    model_config = ConfigDict(extra="forbid")
    approve: bool | None = None
    decisions: dict[str, bool] | None = None


class Waiting(TypedDict):
    """What a session's paused turn waits on (``pending``: null when nothing waits)."""

    session_id: str
    pending: PendingApproval | None


def approval_routes(agent: Agent) -> APIRouter:
    """``GET`` and ``POST /sessions/{id}/approval`` over ``agent``."""
    router = APIRouter(tags=["approvals"])

    @router.get("/sessions/{session_id}/approval", **returns(Waiting))
    def pending(person: Caller, session_id: str) -> Waiting:
        """What a paused turn of this session waits on (``pending`` is null when nothing)."""
        agent.access.read_session(person, session_id)
        return {"session_id": session_id, "pending": agent.approvals.pending(session_id)}

    @router.post("/sessions/{session_id}/approval", **returns(TurnPayload))
    def decide(person: Caller, session_id: str, body: ApprovalBody) -> TurnPayload:
        """Approve or deny what a paused turn waits on; the turn goes on (and may wait again)."""
        agent.access.write_session(person, session_id)
        if (body.approve is None) == (body.decisions is None):
            raise InvalidInput("Give either approve (true/false) or decisions.")
        decision = body.approve if body.approve is not None else body.decisions
        assert decision is not None
        return agent.approvals.decide(session_id, decision)

    return router
