"""The HTTP API (DESIGN §6): the same agent as the app, for scripts and the story runner.

Handlers are plain ``def`` so FastAPI runs them in its thread pool: the SQLite checkpointer
is synchronous and one slow answer must not block other sessions. ``POST /query`` is the
exception: its turn runs in a worker of its own, so the handler starts it from the event loop
and awaits the answer without a thread of its own. Beyond loopback a bearer token
(``LOCAL2_API_TOKEN``) is required.
"""

from __future__ import annotations

import hmac
import os
from functools import partial
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from local2.errors import (
    AwaitingApproval,
    InvalidId,
    InvalidQuery,
    ModelError,
    ModelUnavailable,
    UnknownTurn,
)
from local2.http.compare import add_compare_routes, prefer_or_404, turn_options
from local2.http.guard import is_loopback
from local2.http.sse import answer_first, turn_events
from local2.ids import SESSION_ID_RULE, session_id_problem
from local2.service.agent import Agent

TOKEN_ENV = "LOCAL2_API_TOKEN"


def _session_id_rule(value: str | None) -> str | None:
    problem = session_id_problem(value) if value is not None else None
    if problem:
        raise ValueError(problem)
    return value


Wait = Literal["answer", "critique"]


class QueryBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str
    session_id: str | None = Field(default=None, description=f"Session id: {SESSION_ID_RULE}.")
    wait: Wait | None = Field(
        default=None,
        description="answer (default): return at publish, critique pending; "
        "critique: return once the critic has graded.",
    )
    model_b: str | None = Field(default=None, description="A second respondent's model.")
    temperature_b: float | None = Field(default=None, ge=0, le=2)

    _check_session = field_validator("session_id")(_session_id_rule)


class FeedbackBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str = Field(description=f"Session id: {SESSION_ID_RULE}.")
    query_id: str = Field(min_length=1)
    rating: int | None = Field(default=None, ge=1, le=5)
    preferred: Literal["a", "b", "tie"] | None = None  # for a compared turn
    comment: str | None = Field(default=None, max_length=4000)

    _check_session = field_validator("session_id")(_session_id_rule)

    @model_validator(mode="after")
    def rating_or_preference(self) -> FeedbackBody:
        if self.rating is None and self.preferred is None:
            raise ValueError("give a rating (1-5) or, for a compared turn, preferred (a|b|tie)")
        return self


class ApprovalBody(BaseModel):
    """The person's decision on a paused turn: ``approve`` for every waiting call, or
    ``decisions`` per call id (a waiting call left out is denied)."""

    model_config = ConfigDict(extra="forbid")
    approve: bool | None = None
    decisions: dict[str, bool] | None = None


class ReplayBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    checkpoint_id: str = Field(min_length=1)
    query: str | None = None
    model: str | None = None


def require_token(host: str) -> str | None:
    """The token requests must carry, or None when bound to loopback only."""
    if is_loopback(host):
        return None
    token = os.environ.get(TOKEN_ENV)
    if not token:
        raise RuntimeError(
            f"Serving on {host} (beyond this machine) needs a bearer token: set {TOKEN_ENV}."
        )
    return token


def create_api(agent: Agent, *, token: str | None = None, app: FastAPI | None = None) -> FastAPI:
    """Add LoCAL2's routes to ``app`` (a new FastAPI app by default)."""
    app = app or FastAPI(title="LoCAL2", version="0.1.0")

    async def authorised(request: Request) -> None:  # async: no thread hop per request
        if token is None:
            return
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            raise HTTPException(status_code=401, detail="missing or wrong bearer token")

    @app.exception_handler(RequestValidationError)
    def invalid_body(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(p) for p in e['loc'][1:]) or 'body'}: {e['msg']}" for e in exc.errors()
        ]
        return JSONResponse(status_code=422, content={"detail": "; ".join(problems)})

    def model_failure(exc: ModelError) -> HTTPException:
        status = 503 if isinstance(exc, ModelUnavailable) else 502
        return HTTPException(status_code=status, detail={"error": exc.message, "fix": exc.fix})

    @app.exception_handler(InvalidId)
    def invalid_id(request: Request, exc: InvalidId) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": str(exc)})

    critic_on = agent.services.critic is not None

    @app.get("/health", dependencies=[Depends(authorised)])
    def health() -> dict[str, Any]:
        services = agent.services
        return {
            "status": "ok",
            "model": services.model_name,
            "backend": services.backend,
            "notice": agent.notice,
            "tools": sorted(services.tools),
            "memory": services.memory is not None,
            "critic": services.critic is not None,
        }

    def waiting(exc: AwaitingApproval) -> HTTPException:
        detail = {"error": str(exc), "approval": exc.request, "resume": exc.request.get("resume")}
        return HTTPException(status_code=409, detail=detail)

    @app.post("/query", dependencies=[Depends(authorised)], response_model=dict[str, Any])
    async def query(body: QueryBody, wait: Wait | None = None) -> Any:
        """The turn payload as soon as the answer is published (``critique: null``,
        ``critique_pending: true``; the critic and memory finish after it), or once graded
        with ``wait=critique`` (query parameter or body field).

        Async, so that no thread waits for the turn: it starts from the event loop (unless
        its session's lock must be waited for) and the answer wakes the loop itself."""
        try:
            options = turn_options(agent, body)
            begin = partial(agent.start, body.query, body.session_id, options, tokens=False)
            turn = agent.turns.start_now(body.query, body.session_id, options, tokens=False)
            turn = turn or await run_in_threadpool(begin)
            if (body.wait or wait) == "critique":
                return {**await run_in_threadpool(turn.until_final), "critique_pending": False}
            payload = answer_first(await turn.answer(), critic_on)

            async def hand_over() -> None:
                turn.hand_over()

            # The critic and memory go on once the response is sent, not while it is.
            return JSONResponse(jsonable_encoder(payload), background=BackgroundTask(hand_over))
        except InvalidQuery as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        except AwaitingApproval as exc:
            raise waiting(exc) from exc
        except ModelError as exc:
            raise model_failure(exc) from exc

    def checked(session_id: str) -> str:
        problem = session_id_problem(session_id)
        if problem:
            raise HTTPException(status_code=422, detail=problem)
        return session_id

    @app.get("/sessions/{session_id}/approval", dependencies=[Depends(authorised)])
    def pending(session_id: str) -> dict[str, Any]:
        """What a paused turn of this session waits on (``pending`` is null when nothing)."""
        return {"session_id": session_id, "pending": agent.pending_approval(checked(session_id))}

    @app.post("/sessions/{session_id}/approval", dependencies=[Depends(authorised)])
    def decide(session_id: str, body: ApprovalBody) -> dict[str, Any]:
        """Approve or deny what a paused turn waits on; the turn goes on (and may wait again)."""
        if (body.approve is None) == (body.decisions is None):
            raise HTTPException(
                status_code=422, detail="Give either approve (true/false) or decisions."
            )
        decision = body.approve if body.approve is not None else body.decisions
        try:
            return agent.decide(checked(session_id), decision)  # type: ignore[arg-type]
        except UnknownTurn as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc
        except ValueError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        except ModelError as exc:
            raise model_failure(exc) from exc

    @app.post("/query/stream", dependencies=[Depends(authorised)])
    def query_stream(body: QueryBody) -> StreamingResponse:
        """The turn as server-sent events: thinking, tool calls, answer tokens, the answer,
        then the critique and the final payload (see ``local2.http.sse``). The turn runs to its
        end even if the client goes away."""
        try:
            options = turn_options(agent, body)
            turn = agent.start(body.query, body.session_id, options)
        except InvalidQuery as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        return StreamingResponse(
            turn_events(turn, critic_on, compare=options is not None),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @app.post("/feedback", dependencies=[Depends(authorised)])
    def feedback(body: FeedbackBody) -> dict[str, Any]:
        try:
            result = prefer_or_404(agent, body) if body.preferred else {}
            if body.rating is None:
                return result
            rated = agent.feedback(body.session_id, body.query_id, body.rating, body.comment)
            return {**rated, **({"preference": result} if result else {})}
        except UnknownTurn as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc

    @app.get("/sessions/{session_id}/history", dependencies=[Depends(authorised)])
    def history(session_id: str, limit: int = 50) -> dict[str, Any]:
        try:
            return {
                "session_id": session_id,
                "turns": agent.history(session_id),
                "checkpoints": agent.checkpoints(session_id, max(1, min(limit, 1000))),
            }
        except UnknownTurn as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc

    @app.post("/sessions/{session_id}/replay", dependencies=[Depends(authorised)])
    def replay(session_id: str, body: ReplayBody) -> dict[str, Any]:
        try:
            return agent.replay(session_id, body.checkpoint_id, query=body.query, model=body.model)
        except UnknownTurn as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from exc
        except InvalidQuery as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        except ModelError as exc:
            raise model_failure(exc) from exc

    add_compare_routes(app, agent, authorised)
    from local2.http.research import research_routes

    app.include_router(research_routes(agent), dependencies=[Depends(authorised)])
    return app
