"""A session over HTTP: its history and checkpoints, replay from one of them, and a Stop of
its running turn."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from local2.contracts import SessionHistory, SessionSummary, TurnPayload
from local2.errors import NothingToStop
from local2.http._identity import Caller
from local2.http._openapi import returns
from local2.service import Agent


class ReplayBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    checkpoint_id: str = Field(min_length=1)
    query: str | None = Field(default=None, description="Ask this instead of the original.")
    model: str | None = Field(default=None, description="Answer with this model instead.")


class StopResult(BaseModel):
    session_id: str
    status: Literal["stopping"]


def session_routes(agent: Agent) -> APIRouter:
    """``GET /sessions``, ``GET /sessions/{id}/history``, ``POST /sessions/{id}/replay``
    and ``POST /sessions/{id}/stop`` over ``agent``."""
    router = APIRouter(tags=["sessions"])

    @router.get("/sessions", **returns(list[SessionSummary], "Sessions, newest first."))
    def sessions(person: Caller, limit: int = 20, everyone: bool = False) -> list[SessionSummary]:
        """The caller's sessions, newest first (the app's Resume list): id, number of
        turns, when started and last updated, and the first question. ``limit``: 1-1000.
        ``everyone``: an admin's list of all sessions (written to the admin read log)."""
        owner = agent.access.listing_owner(person, everyone)
        return agent.sessions.recent(max(1, min(limit, 1000)), owner)

    @router.get("/sessions/{session_id}/history", **returns(SessionHistory))
    def history(person: Caller, session_id: str, limit: int = 50) -> SessionHistory:
        """The session's clean turns, each with its critic's grade (``critique``; null until
        given), and its checkpoints (newest first, at most ``limit``)."""
        agent.access.read_session(person, session_id)
        return agent.sessions.session(session_id, max(1, min(limit, 1000)))

    @router.post("/sessions/{session_id}/replay", **returns(TurnPayload, "The new branch's turn."))
    def replay(person: Caller, session_id: str, body: ReplayBody) -> TurnPayload:
        """Re-run from a past checkpoint as a new branch; the payload also names the branch
        (``branch``, ``replayed_from``) and what the original answered (``original``)."""
        agent.access.write_session(person, session_id)
        return agent.timetravel.replay(
            session_id, body.checkpoint_id, query=body.query, model=body.model
        )

    @router.post("/sessions/{session_id}/stop", **returns(StopResult, "The turn is stopping."))
    def stop(person: Caller, session_id: str) -> StopResult:
        """Stop the session's running turn before its answer, as the app's Stop does:
        nothing is recorded, what streamed is abandoned, and a ``POST /query`` waiting on
        it gets 409 with ``status: stopped``. 409 when nothing is running (or the answer is
        already out: the critic and memory then finish). Turns run by this process only."""
        agent.access.write_session(person, session_id)
        if not agent.turns.stop(session_id):
            raise NothingToStop(
                f"Nothing to stop in session '{session_id}': no turn of it is running here, "
                "or its answer is already out."
            )
        return StopResult(session_id=session_id, status="stopping")

    return router
