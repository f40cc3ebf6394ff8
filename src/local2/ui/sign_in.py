"""Signing in to the app, and the person each of its handlers acts for.

How a browser gets in (:func:`local2.ui.server.create_app` mounts the app with one of these):

- Nobody configured (``local2 users`` never used): as always. Nothing is asked on loopback;
  beyond it the password is ``LOCAL2_API_TOKEN`` (any user name). Everything is local's.
- People configured: Gradio's login page asks for a name and a password; the password is
  that person's token (:meth:`SignIn.check`). The name ``local`` with ``LOCAL2_API_TOKEN``
  is local, as on the HTTP API.
- ``server.trusted_user_header``: the reverse proxy has signed the person in and names them
  in that header; Gradio asks :func:`proxied_user` on every request and shows no login page.
  The header counts only from ``server.trusted_proxies`` (:mod:`local2.http.identity`).

People are added and removed with the CLI, in another process, while the server runs. So
whether the app asks anyone to sign in is decided on every request (:class:`SignInSwitch`),
every login attempt asks the store afresh, and every handler maps the signed-in name to a
person afresh (:func:`person_of`): a removed person is signed out at their next click, and
a person whose token was rotated at their next request. When
the first person is added, every earlier sign-in (made with the single token, under any
name) is forgotten, so no one keeps a name they typed before names meant anything.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from local2.contracts.people import LOCAL, LOCAL_NAME, Person
from local2.errors import Local2Error
from local2.http.identity import Identify
from local2.service.access import Access

if TYPE_CHECKING:
    from local2.storage.people import People

TOKEN_MESSAGE = "This LoCAL2 server is reachable beyond this machine: enter its LOCAL2_API_TOKEN."
# Shown as plain text on Gradio's login page (no Markdown there).
PEOPLE_MESSAGE = (
    "Sign in to LoCAL2: your name, and as the password your token (from "
    "'local2 users add NAME', or a new one from 'local2 users rotate NAME')."
)
LOCAL_TOO = " This machine's own person: the name 'local' and the LOCAL2_API_TOKEN."


class SignedOut(Local2Error):
    """The browser's sign-in no longer names a person here (removed since, or none)."""


def signed_out() -> SignedOut:
    return SignedOut(
        "You are not signed in to this LoCAL2 server as anyone it knows.",
        "Log out (the button at the top, or open /logout) and sign in with your name and token.",
    )


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


@dataclass
class SignIn:
    """Who may sign in on the login page, and whether the page is needed at all."""

    access: Access
    token: str | None = None  # LOCAL2_API_TOKEN (None: not set)
    loopback: bool = True  # bound to loopback only: with nobody configured, nothing is asked

    def check(self, username: str, password: str) -> bool:
        """A person's name and their token; with nobody configured, the single token (any
        name, as always); the name ``local`` with the single token is local."""
        name = username.strip().lower()
        people = self.access.people
        if people is None or not people.configured():
            return self._single_token(password)
        if name == LOCAL_NAME:
            return self._single_token(password)
        person = people.by_token(password) if password else None
        return person is not None and _same(name, person.name)  # the token is theirs

    def _single_token(self, password: str) -> bool:
        return bool(self.token and password) and _same(password, self.token or "")

    def needed(self, configured: bool) -> bool:
        """Whether the app asks for a sign-in: beyond loopback always, on loopback once
        anyone is configured."""
        return configured or self.token is not None or not self.loopback

    def message(self, configured: bool) -> str:
        if not configured:
            return TOKEN_MESSAGE
        return PEOPLE_MESSAGE + (LOCAL_TOO if self.token else "")

    async def login(self, username: str, password: str) -> bool:
        """Gradio's ``auth``: a coroutine function, so Gradio awaits it (an object with an
        async ``__call__`` would not be awaited, and its coroutine is truthy). The lookup
        may reach Postgres, so it runs in a thread."""
        return await anyio.to_thread.run_sync(self.check, username, password)


@dataclass
class SignInSwitch:
    """ASGI middleware: before each request, turns the app's login page on or off
    (Gradio reads its ``auth`` per request) as people are added or removed, and signs out
    the browsers of a person whose token was rotated."""

    app: ASGIApp
    gradio: Any  # the mounted gradio.routes.App
    sign_in: SignIn
    had_people: bool = False  # whether anyone was configured at the last request
    api_routes: Sequence[BaseRoute] = ()  # the HTTP API's, beside the mounted app

    def __post_init__(self) -> None:
        self.had_people = self.sign_in.access.configured()
        self.update()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not self.is_api(scope):
            await anyio.to_thread.run_sync(self.update)
        await self.app(scope, receive, send)

    def is_api(self, scope: Scope) -> bool:
        """Whether the request is for one of the HTTP API's routes (they say who they are
        for themselves, :mod:`local2.http.identity`): no store query, no thread hop."""
        return any(route.matches(scope)[0] is Match.FULL for route in self.api_routes)

    def update(self) -> None:
        """One small query: when anyone was last added or given a token (None: nobody)."""
        people = self.sign_in.access.people
        change = people.last_change() if people is not None else None
        configured = change is not None
        if configured and not self.had_people:
            self.gradio.tokens.clear()  # sign-ins under names that meant nothing until now
        self.had_people = configured
        if people is not None:
            self.forget_rotated(people, change)
        self.gradio.auth = self.sign_in.login if self.sign_in.needed(configured) else None
        self.gradio.get_blocks().auth_message = self.sign_in.message(configured)

    rotated: dict[str, float] | None = None  # {name: when their token was set}, last seen
    last_change: float | None = None

    def forget_rotated(self, people: People, change: float | None) -> None:
        """Sign out every browser of a person whose token was rotated since it signed in
        (Gradio's cookie does not carry the token, so the old sign-in would live on). The
        whole list is read only when ``change`` (the latest token change) moved."""
        if change == self.last_change and self.rotated is not None:
            return
        rotated = people.rotations()
        if self.rotated is not None:
            changed = {n for n, at in rotated.items() if self.rotated.get(n, at) != at}
            for cookie, user in list(self.gradio.tokens.items()):
                if str(user).strip().lower() in changed:
                    del self.gradio.tokens[cookie]
        self.rotated, self.last_change = rotated, change


def proxied_user(identify: Identify) -> Callable[[Request], Awaitable[str | None]]:
    """Gradio's ``auth_dependency`` behind a trusted proxy: the name the proxy vouches for
    (only from ``server.trusted_proxies``), else who a bearer token is, else local when
    nobody is configured on loopback, else None (Gradio answers 401)."""

    def who(request: Request) -> str | None:
        header = identify.user_header
        person = identify.person(
            request.headers.get("authorization", ""),
            request.headers.get(header) if header else None,
            request.client.host if request.client else None,
        )
        return person.name if person is not None else None

    async def user(request: Request) -> str | None:
        return await anyio.to_thread.run_sync(who, request)

    return user


def person_of(access: Access, proxied: bool, request: Any) -> Person:
    """The person a handler acts for: whoever is signed in to this browser.

    ``request`` is Gradio's ``gr.Request`` (None when a handler is called directly, as
    tests do); ``proxied``: the names come from a trusted proxy (``server.trusted_user_header``).
    Raises :class:`SignedOut` when the sign-in no longer names anyone here."""
    name = str(getattr(request, "username", None) or "").strip().lower()
    people = access.people
    configured = access.configured()
    if not name:
        if proxied or configured:
            raise signed_out()  # Gradio lets no one through unsigned: a handler called bare
        return LOCAL
    if name == LOCAL_NAME:
        return LOCAL
    if proxied:  # the proxy vouches for the name; whether they are an admin is ours to say
        return (people.get(name) if people is not None else None) or Person(name)
    if not configured:
        return LOCAL  # signed in with the single token, under any name, as always
    person = people.get(name) if people is not None else None
    if person is None:
        raise signed_out()  # removed since they signed in
    return person
