"""Who an MCP call is for.

Over stdio it is the person the command runs for (``local2 [--as NAME] mcp``). Over HTTP
(``/mcp`` on ``local2 serve``) every request says who it is exactly as the API's routes do
(:class:`local2.http.identity.Identify`: a person's bearer token, the single
``LOCAL2_API_TOKEN``, a trusted proxy's header, or local on a loopback server nobody was
added to); anything else is 401 before the MCP server reads a byte. :class:`PersonGate`
puts the person in a context variable the SDK carries to the tool's handler, and names them
as the request's ``user``, so an MCP session is bound to the person who opened it (the
SDK's session manager answers another credential's request for it as for an unknown
session).
"""

from __future__ import annotations

from contextvars import ContextVar

import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from local2.contracts import Person
from local2.http import Identify, challenge

SIGN_IN = (
    "This LoCAL2 server takes a static bearer token, not an OAuth sign-in: the request had "
    "none, or one nobody here holds."
)
SIGN_IN_FIX = (
    "Send 'Authorization: Bearer <token>' (local2 users add NAME prints a person's token; or "
    "LOCAL2_API_TOKEN): local2 mcp --print-config prints a host's configuration with it; the "
    "MCP Inspector takes --header 'Authorization: Bearer <token>'."
)

CALLER: ContextVar[Person | None] = ContextVar("local2_mcp_caller", default=None)


def caller(default: Person | None = None) -> Person:
    """The person this call is for: the request's (HTTP), else ``default`` (stdio)."""
    person = CALLER.get() or default
    if person is None:
        # a server built for HTTP reached without its gate: a bug, never local's by default
        raise RuntimeError("no one is signed in for this MCP call")
    return person


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
