"""``/mcp`` on ``local2 serve``: the MCP server over streamable HTTP, behind a gate.

Every request says who it is exactly as the API's routes do
(:class:`local2.service.sign_in.Identify`: a person's bearer token, the single
``LOCAL2_API_TOKEN``, a trusted proxy's header, or local on a loopback server nobody was
added to); anything else is 401 before the MCP server reads a byte. :class:`PersonGate`
puts the person in a context variable the SDK carries to the tool's handler
(:data:`~local2.mcp_server._caller.CALLER`), and names them as the request's ``user``, so an
MCP session is bound to the person who opened it (the SDK's session manager answers another
credential's request for it as for an unknown session). Kept apart from the server itself:
``local2 mcp`` (stdio) imports none of FastAPI.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from fastapi import FastAPI
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from local2.mcp_server._caller import CALLER
from local2.mcp_server._server import build_server
from local2.service import Identify, challenge

if TYPE_CHECKING:
    from local2.service import Agent

MCP_PATH = "/mcp"  # every request to it has its Origin checked (add_guards)
SIGN_IN = (
    "This LoCAL2 server takes a static bearer token, not an OAuth sign-in: the request had "
    "none, or one nobody here holds."
)
SIGN_IN_FIX = (
    "Send 'Authorization: Bearer <token>' (local2 users add NAME prints a person's token; or "
    "LOCAL2_API_TOKEN): local2 mcp --print-config prints a host's configuration with it; the "
    "MCP Inspector takes --header 'Authorization: Bearer <token>'."
)


def refused(detail: str | dict[str, str]) -> dict[str, object]:
    """The 401's body: the API's ``detail`` and, for a person reading a host's error, what
    kind of sign-in this is and how to give it."""
    if isinstance(detail, dict):  # no credential anyone could bring: the server says why
        return {"detail": detail, "error": detail["error"], "fix": detail["fix"]}
    return {"detail": detail, "error": SIGN_IN, "fix": SIGN_IN_FIX}


class PersonGate:
    """ASGI middleware in front of the MCP transport: 401 without a credential the API would
    accept; otherwise the request is the person's (:data:`CALLER`, ``scope["user"]``)."""

    def __init__(self, app: ASGIApp, who: Identify) -> None:
        self.app = app
        self.who = who

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        header = self.who.user_header
        client = (scope.get("client") or (None,))[0]
        # A thread: the token lookup may reach Postgres.
        person = await anyio.to_thread.run_sync(
            self.who.person,
            headers.get("authorization", ""),
            headers.get(header) if header else None,
            client,
        )
        if person is None:
            refusal = JSONResponse(
                refused(self.who.refusal()),
                status_code=401,
                headers={"WWW-Authenticate": challenge(headers.get("authorization"))},
            )
            await refusal(scope, receive, send)
            return
        scope = dict(scope)
        scope["user"] = AuthenticatedUser(
            AccessToken(token="", client_id=person.name, scopes=[], subject=person.name)
        )
        token = CALLER.set(person)
        try:
            await self.app(scope, receive, send)
        finally:
            CALLER.reset(token)


def mount_mcp(app: FastAPI, agent: Agent, who: Identify) -> MCPServer:
    """Serve MCP at ``/mcp`` in ``app`` (streamable HTTP), each request ``who`` says; its
    sessions are run while the app runs (its lifespan)."""
    server = build_server(agent, transport="http")
    no_second_check = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=no_second_check)
    manager = server.session_manager
    endpoint = PersonGate(StreamableHTTPASGIApp(manager), who)
    app.router.routes.append(
        Route(
            MCP_PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False
        )
    )
    before = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(running: Any) -> AsyncIterator[Any]:
        async with manager.run(), before(running) as state:
            yield state

    app.router.lifespan_context = lifespan
    return server
