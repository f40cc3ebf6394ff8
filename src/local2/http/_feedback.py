"""Ratings and preferences over HTTP: ``POST /feedback``."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, model_validator

from local2.contracts import FeedbackResult
from local2.http._bodies import session_id_field
from local2.http._identity import Caller
from local2.http._openapi import returns
from local2.service import Agent


class FeedbackBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str = session_id_field()  # type: ignore[assignment]  # Pydantic's Field() stands in for the default
    query_id: str = Field(min_length=1)
    rating: int | None = Field(default=None, ge=1, le=5)
    preferred: Literal["a", "b", "tie"] | None = Field(
        default=None, description="For a compared turn: the answer the person prefers."
    )
    comment: str | None = Field(default=None, max_length=4000)

    @model_validator(mode="after")
    def rating_or_preference(self) -> FeedbackBody:
        if self.rating is None and self.preferred is None:
            raise ValueError("give a rating (1-5) or, for a compared turn, preferred (a|b|tie)")
        return self


def feedback_routes(agent: Agent) -> APIRouter:
    """``POST /feedback`` over ``agent``."""
    router = APIRouter(tags=["ratings"])

    @router.post("/feedback", **returns(FeedbackResult, "What was recorded."))
    def feedback(person: Caller, body: FeedbackBody) -> FeedbackResult:
        """Rate a turn (1-5), prefer one answer of a compared turn, or both at once."""
        agent.access.write_session(person, body.session_id)
        preference: FeedbackResult = {}
        if body.preferred:
            preference = agent.ratings.prefer(
                body.session_id, body.query_id, body.preferred, body.comment
            )
        if body.rating is None:
            return preference
        rated = agent.ratings.feedback(body.session_id, body.query_id, body.rating, body.comment)
        return {**rated, "preference": FeedbackResult(**preference)} if preference else rated

    return router
