"""Research over HTTP.

``POST /research`` streams server-sent events: ``run`` first (the run id), then the
research and tool events (named by their subject), ``report`` when the report is
published, and ``done`` with the payload at the end, or ``error`` if the run stopped.
``GET /research/{run_id}`` returns a run's payload (``status`` says whether it finished);
``GET /research`` lists recent runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from local2.contracts.research import ResearchPayload, ResearchRun
from local2.contracts.stream import ResearchItem
from local2.http.identity import Caller
from local2.http.openapi import ERROR_RESPONSES, returns
from local2.http.sse import event_stream, frame
from local2.service.agent import Agent


class ResearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str
    max_rounds: int | None = Field(default=None, ge=1, le=10)


class ResearchRuns(TypedDict):
    """``GET /research``: recent runs, newest first."""

    runs: list[ResearchRun]


def research_frames(items: Iterator[ResearchItem]) -> Iterator[str]:
    """A run's items as server-sent events."""
    for kind, data in items:
        if kind == "event":
            yield frame(str(data.get("subject", "event")), data)
        elif kind == "final":
            yield frame("done", data)
        else:
            yield frame(kind, data)


def research_routes(agent: Agent) -> APIRouter:
    """The research routes over ``agent``'s research service (:attr:`Agent.research`)."""
    router = APIRouter(tags=["research"])

    @router.post(
        "/research",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}, **ERROR_RESPONSES},
    )
    def start(person: Caller, body: ResearchBody) -> StreamingResponse:
        """Research a question: search, read, verify, report; its events as they happen."""
        items = agent.research.stream(body.question, max_rounds=body.max_rounds, person=person)
        return event_stream(research_frames(items))

    @router.post(
        "/research/{run_id}/resume",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}, **ERROR_RESPONSES},
    )
    def resume(person: Caller, run_id: str) -> StreamingResponse:
        """Continue the caller's unfinished run from its last finished step, as events."""
        return event_stream(research_frames(agent.research.resume(run_id, person)))

    @router.get("/research", **returns(ResearchRuns))
    def runs(person: Caller, limit: int = 20, everyone: bool = False) -> Any:
        """The caller's runs, newest first (an admin's ``everyone``: all)."""
        owner = agent.access.listing_owner(person, everyone)
        return {"runs": agent.research.runs(max(1, min(limit, 200)), owner)}

    @router.get("/research/{run_id}", **returns(ResearchPayload, "The run's payload."))
    def run(person: Caller, run_id: str) -> Any:
        return agent.research.payload(run_id, person, agent.access)

    return router
