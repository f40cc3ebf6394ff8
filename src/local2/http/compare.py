"""HTTP routes for comparing and retrying (DESIGN §9), added by :func:`local2.http.app.create_api`.

- ``GET /arena?format=json|csv``: the ratings, people's and the judge's apart.
- ``POST /sessions/{id}/retry {query_id}``: a second attempt with the critic's feedback;
  returns the new turn's payload (``retry`` says which attempt continues).
- ``POST /sessions/{id}/show {query_id, attempt}``: continue from attempt 1 or 2.
Preferences go through ``POST /feedback {..., preferred}`` like ratings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

from local2.errors import CannotRetry, InvalidQuery, UnknownTurn
from local2.graph.compare.spec import compare_spec
from local2.service.agent import Agent


class RetryBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query_id: str = Field(min_length=1)


class ShowBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query_id: str = Field(min_length=1)
    attempt: Literal[1, 2]


def turn_options(agent: Agent, body: BaseModel) -> dict[str, Any] | None:
    """The compare options of a ``/query`` body: its ``model_b``/``temperature_b``, or the
    server's default (``serve --model-b``) when it names neither; 422 on a bad value."""
    given = body.model_fields_set & {"model_b", "temperature_b"}
    try:
        spec = (
            compare_spec(getattr(body, "model_b", None), getattr(body, "temperature_b", None))
            if given
            else agent.compare_default
        )
    except ValueError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from exc
    return {"compare": spec} if spec else None


def prefer_or_404(agent: Agent, body: Any) -> dict[str, Any]:
    try:
        return agent.prefer(body.session_id, body.query_id, body.preferred, body.comment)
    except UnknownTurn as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc


def add_compare_routes(app: FastAPI, agent: Agent, authorised: Callable[..., None]) -> None:
    @app.get("/arena", dependencies=[Depends(authorised)])
    def arena(format: Literal["json", "csv"] = "json") -> Any:
        from local2.arena.report import arena as table_of
        from local2.arena.report import as_csv, as_json

        votes = agent.votes()
        table = table_of(votes)
        if format == "csv":
            return PlainTextResponse(as_csv(table), media_type="text/csv")
        return PlainTextResponse(as_json(table, votes), media_type="application/json")

    @app.post("/sessions/{session_id}/retry", dependencies=[Depends(authorised)])
    def retry(session_id: str, body: RetryBody) -> dict[str, Any]:
        from local2.errors import ModelError

        try:
            payload: dict[str, Any] = {}
            for kind, data in agent.retry(session_id, body.query_id):
                if kind == "final":
                    payload = data
            return payload
        except UnknownTurn as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc
        except (CannotRetry, InvalidQuery) as exc:
            raise HTTPException(status_code=409, detail=str(exc)) from exc
        except ModelError as exc:
            raise HTTPException(
                status_code=502, detail={"error": exc.message, "fix": exc.fix}
            ) from exc

    @app.post("/sessions/{session_id}/show", dependencies=[Depends(authorised)])
    def show(session_id: str, body: ShowBody) -> dict[str, Any]:
        try:
            return agent.show(session_id, body.query_id, body.attempt)
        except UnknownTurn as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc
