"""The HTTP API: the same agent as the app, for scripts and the story runner.

One router per feature (:mod:`~local2.http._turns`, :mod:`~local2.http._sessions`,
:mod:`~local2.http._approvals`, :mod:`~local2.http._feedback`, :mod:`~local2.http._compare`,
:mod:`~local2.http._research`, :mod:`~local2.http._documents`, :mod:`~local2.http._evals`,
:mod:`~local2.http._watches`),
errors answered once (:mod:`~local2.http._errors`).

Handlers are plain ``def`` so FastAPI runs them in its thread pool: the SQLite checkpointer
is synchronous and one slow answer must not block other sessions. ``POST /query`` is the
exception: its turn runs in a worker of its own, so the handler starts it from the event loop
and awaits the answer without a thread of its own. Beyond loopback a bearer token
(``LOCAL2_API_TOKEN``, which means local on any bind) is required; with people configured,
every request is one person's (:mod:`local2.service.sign_in`) and sees only what is theirs
(:mod:`local2.service.access`).
"""

from __future__ import annotations

import os

from fastapi import APIRouter, Depends, FastAPI
from typing_extensions import TypedDict

from local2.errors import UnsafeToServe
from local2.http._approvals import approval_routes
from local2.http._compare import compare_routes
from local2.http._documents import document_routes
from local2.http._errors import add_error_handlers
from local2.http._evals import eval_routes
from local2.http._feedback import feedback_routes
from local2.http._identity import Caller, signed_in
from local2.http._library import library_routes
from local2.http._openapi import returns
from local2.http._research import research_routes
from local2.http._search import search_routes
from local2.http._sessions import session_routes
from local2.http._turns import turn_routes
from local2.http._watches import feed_routes, watch_routes
from local2.ports import is_loopback
from local2.service import Agent, Identify, identify

TOKEN_ENV = "LOCAL2_API_TOKEN"


def require_token(host: str, people: bool = False) -> str | None:
    """The single token requests may carry (``LOCAL2_API_TOKEN``, whatever the bind: it
    always means local), or None when it is not set. Beyond loopback, one of it or ``people``
    configured (each with a token of their own) is needed to serve at all."""
    token = os.environ.get(TOKEN_ENV) or None
    if token is None and not people and not is_loopback(host):
        raise UnsafeToServe(
            f"Serving on {host} (beyond this machine) needs a bearer token: set {TOKEN_ENV}, "
            "or add people (local2 users add NAME).",
            f"export {TOKEN_ENV}=$(openssl rand -hex 24), or bind --host 127.0.0.1.",
        )
    return token


class Health(TypedDict):
    """``GET /health``: who asks, what serves them, and any notice about it."""

    status: str
    person: str
    model: str
    backend: str
    notice: str | None
    tools: list[str]
    memory: bool
    critic: bool


def health_routes(agent: Agent) -> APIRouter:
    """``GET /health``: what is serving (model, backend, tools) and any notice about it."""
    router = APIRouter(tags=["health"])

    @router.get("/health", **returns(Health))
    def health(person: Caller) -> Health:
        info = agent.info
        return {
            "status": "ok",
            "person": person.name,
            "model": info.model,
            "backend": info.backend,
            "notice": agent.notice,
            "tools": list(info.tools),
            "memory": info.memory,
            "critic": info.critic,
        }

    return router


ROUTERS = (
    health_routes,
    turn_routes,
    session_routes,
    approval_routes,
    feedback_routes,
    compare_routes,
    research_routes,
    document_routes,
    search_routes,
    library_routes,
    eval_routes,
    watch_routes,
)


def liveness_routes() -> APIRouter:
    """``GET /live``: whether the process answers at all, for a load balancer's or a
    supervisor's health check; asks no one who they are and tells nothing else (``/health``
    is for signed-in callers)."""
    router = APIRouter(tags=["health"])

    @router.get("/live")
    async def live() -> dict[str, str]:
        return {"status": "ok"}

    return router


def create_api(
    agent: Agent,
    *,
    token: str | None = None,
    host: str = "127.0.0.1",
    app: FastAPI | None = None,
    who: Identify | None = None,
) -> FastAPI:
    """Add LoCAL2's routes to ``app`` (a new FastAPI app by default); each request is a
    person's (:mod:`local2.service.sign_in`): ``who`` says whose, by default from ``token``
    and the bind address ``host``."""
    app = app or FastAPI(title="LoCAL2", version="0.1.0")
    add_error_handlers(app)
    if who is None:
        who = identify(agent.access, token, agent.settings.server, loopback=is_loopback(host))
    guarded = [Depends(signed_in(who))]
    # Before /watches/{watch_id}: its own sign-in, or a feed token in the query.
    app.include_router(feed_routes(agent, who))
    for routes in ROUTERS:
        app.include_router(routes(agent), dependencies=guarded)
    app.include_router(liveness_routes())
    return app
