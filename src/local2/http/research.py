"""Research over HTTP: ``POST /research`` streams server-sent events, then the payload.

``GET /research/{run_id}`` returns a run's payload (``status`` says whether it finished),
``GET /research`` lists recent runs. Each SSE message is ``event: <subject>`` with a JSON
``data:`` line: ``run`` first (the run id), then the research and tool events, ``report``
when the report is published, ``payload`` at the end, or ``error`` if the run stopped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from local2.service.agent import Agent


class ResearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str
    max_rounds: int | None = Field(default=None, ge=1, le=10)


def sse(event: str, data: Any) -> str:
    """One server-sent event; JSON keeps the data on a single line."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def _events(items: Iterator[tuple[str, Any]]) -> Iterator[str]:
    from local2.errors import ModelError

    try:
        for kind, data in items:
            if kind == "event":
                yield sse(str(data.get("subject", "event")), data)
            elif kind == "final":
                yield sse("payload", data)
            else:
                yield sse(kind, data)
    except ModelError as exc:
        yield sse("error", {"error": exc.message, "fix": exc.fix})


def research_routes(agent: Agent) -> APIRouter:
    """The research routes over ``agent``'s research service (:attr:`Agent.research`)."""
    from local2.errors import InvalidId, InvalidQuery, UnknownRun

    router = APIRouter()

    @router.post("/research")
    def start(body: ResearchBody) -> StreamingResponse:
        try:
            items = agent.research.stream(body.question, max_rounds=body.max_rounds)
        except InvalidQuery as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        return StreamingResponse(
            _events(items),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @router.get("/research")
    def runs(limit: int = 20) -> dict[str, Any]:
        return {"runs": agent.research.runs(max(1, min(limit, 200)))}

    @router.get("/research/{run_id}")
    def run(run_id: str) -> dict[str, Any]:
        try:
            return agent.research.payload(run_id)
        except InvalidId as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        except UnknownRun as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc

    return router
