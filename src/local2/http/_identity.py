"""Who a request is for, as the API's routes take it: the service's one rule
(:class:`local2.service.Identify`, ``service/sign_in.py``) adapted to FastAPI, a 401 with
its challenge when it names nobody, and the middleware that strips the trusted user header
from a request no trusted proxy sent."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from starlette.types import ASGIApp, Receive, Scope, Send

from local2.contracts import Person
from local2.service import Identify, Network, challenge, trusted


def person_of(who: Identify, request: Request) -> Person:
    """The person ``who`` says sent ``request``; 401 with its challenge when nobody."""
    person = who.person(
        request.headers.get("authorization", ""),
        request.headers.get(who.user_header) if who.user_header else None,
        request.client.host if request.client else None,
    )
    if person is None:
        authorization = request.headers.get("authorization")
        raise HTTPException(
            status_code=401,
            detail=who.refusal(),
            headers={"WWW-Authenticate": challenge(authorization)},
        )
    return person


class StripUntrustedUser:
    """ASGI middleware: the trusted user header is removed from every request not sent by
    a trusted proxy, before any route or the app can read it."""

    def __init__(self, app: ASGIApp, header: str, proxies: tuple[Network, ...]) -> None:
        self.app = app
        self.header = header.lower().encode()
        self.proxies = proxies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            client = (scope.get("client") or (None,))[0]
            if not trusted(client, self.proxies):
                scope = dict(scope)
                scope["headers"] = [(k, v) for k, v in scope["headers"] if k != self.header]
        await self.app(scope, receive, send)


def signed_in(who: Identify) -> Any:
    """A dependency that says who the request is for (``request.state.person``), or 401
    (:func:`person_of`); routes take it as a :data:`Caller`."""

    def authorised(request: Request) -> None:  # a thread: the lookup may reach Postgres
        request.state.person = person_of(who, request)

    return authorised


async def current_person(request: Request) -> Person:
    person: Person = request.state.person
    return person


Caller = Annotated[Person, Depends(current_person)]
