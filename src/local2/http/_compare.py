"""Comparing and retrying over HTTP.

- ``GET /arena?format=json|csv``: the ratings, people's and the judge's apart.
- ``POST /sessions/{id}/retry {query_id}``: a second attempt with the critic's feedback;
  returns the new turn's payload (``retry`` says which attempt continues).
- ``POST /sessions/{id}/show {query_id, attempt}``: continue from attempt 1 or 2.

Preferences go through ``POST /feedback {..., preferred}`` like ratings.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

from local2.contracts import AttemptShown, TurnPayload, collect_turn
from local2.http._identity import Caller
from local2.http._openapi import returns
from local2.service import Agent


class RetryBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query_id: str = Field(min_length=1)


class ShowBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query_id: str = Field(min_length=1)
    attempt: Literal[1, 2]


def compare_routes(agent: Agent) -> APIRouter:
    """The arena, retry and show routes over ``agent``."""
    router = APIRouter(tags=["compare"])

    @router.get("/arena", response_class=PlainTextResponse)
    def arena(
        person: Caller, format: Literal["json", "csv"] = "json", everyone: bool = False
    ) -> PlainTextResponse:
        """The leaderboard from the caller's own votes (an admin's ``everyone``: all)."""
        # lazy: local2.arena: ~4 ms, 3 modules at import
        from local2.arena import arena as table_of
        from local2.arena import as_csv, as_json

        votes = agent.votes.own(person, everyone)
        table = table_of(votes)
        if format == "csv":
            return PlainTextResponse(as_csv(table), media_type="text/csv")
        return PlainTextResponse(as_json(table, votes), media_type="application/json")

    @router.post("/sessions/{session_id}/retry", **returns(TurnPayload, "The second attempt."))
    def retry(person: Caller, session_id: str, body: RetryBody) -> TurnPayload:
        """A second attempt at a low-graded answer, with the critic's feedback."""
        agent.access.write_session(person, session_id)
        return collect_turn(agent.retries.retry(session_id, body.query_id, person=person))

    @router.post("/sessions/{session_id}/show", **returns(AttemptShown))
    def show(person: Caller, session_id: str, body: ShowBody) -> AttemptShown:
        """Continue the session from attempt 1 or 2 of a retried turn."""
        agent.access.write_session(person, session_id)
        return agent.retries.show(session_id, body.query_id, body.attempt)

    return router
