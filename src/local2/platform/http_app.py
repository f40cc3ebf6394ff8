"""LangGraph Server's custom app (langgraph.json's ``http.app``): no routes of its own, only
the challenge every 401 carries.

:func:`local2.platform.auth.authenticate` names the challenge in its exception, but the
platform (langgraph-api 0.16) turns that exception into a 401 of its own and drops its
headers; a middleware of the custom app wraps the platform's auth, so it is where the
header can be put. The challenge is the API's and ``/mcp``'s
(:func:`local2.service.challenge`): a host that reads a bare ``Bearer`` asks for an OAuth
sign-in this server does not offer."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from local2.service import challenge

WWW_AUTHENTICATE = b"www-authenticate"


class SignInChallenge:
    """ASGI middleware: a 401 that says no ``WWW-Authenticate`` gets LoCAL2's."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        said = challenge(Headers(scope=scope).get("authorization")).encode("latin-1")

        async def send_challenged(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                headers = list(message.get("headers") or [])
                if not any(name.lower() == WWW_AUTHENTICATE for name, _ in headers):
                    message = {**message, "headers": [*headers, (WWW_AUTHENTICATE, said)]}
            await send(message)

        await self.app(scope, receive, send_challenged)


app = Starlette(middleware=[Middleware(SignInChallenge)])
