"""Signing in to the app, and the person each of its handlers acts for.

How a browser gets in (:func:`local2.ui.mount_ui` mounts the app with one of these):

- Nobody configured (``local2 users`` never used): as always. Nothing is asked on loopback;
  beyond it the password is ``LOCAL2_API_TOKEN`` (any user name). Everything is local's.
- People configured: Gradio's login page asks for a name and a password; the password is
  that person's token (:meth:`SignIn.check`). The name ``local`` with ``LOCAL2_API_TOKEN``
  is local, as on the HTTP API.
- ``server.trusted_user_header``: the reverse proxy has signed the person in and names them
  in that header; Gradio asks :func:`proxied_user` on every request and shows no login page.
  The header counts only from ``server.trusted_proxies`` (:mod:`local2.service.sign_in`).

People are added, rotated and removed with the CLI, in another process, while the server
runs. So on every request to the app (:class:`SignInSwitch`) the store is asked, in one
statement, whether anyone is configured (the login page is turned on or off, and never off
again once a credential was needed: :class:`~local2.service.sign_in.Guard`) and whether the
browser's sign-in still holds: each sign-in keeps the credential it was made with
(:class:`Credential`, the hash of the person's token), and one whose person no longer has
that token (rotated, removed, or removed and added again) is forgotten before Gradio reads
it, in every serve process. Sign-ins made with the single token while nobody was configured
(under any name) are forgotten once anyone is. Every handler maps the signed-in name to a
person afresh (:func:`person_of`).
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.requests import HTTPConnection, Request
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from local2.contracts import LOCAL, LOCAL_NAME, Person
from local2.errors import Local2Error
from local2.service import Access, Guard, Identify
from local2.storage import token_hash

TOKEN_MESSAGE = "This LoCAL2 server asks for its LOCAL2_API_TOKEN: enter it as the password."
# Shown as plain text on Gradio's login page (no Markdown there).
PEOPLE_MESSAGE = (
    "Sign in to LoCAL2: your name, and as the password your token (from "
    "'local2 users add NAME', or a new one from 'local2 users rotate NAME')."
)
LOCAL_TOO = " This machine's own person: the name 'local' and the LOCAL2_API_TOKEN."
NO_ONE_MESSAGE = (
    "No one can sign in to this LoCAL2 server yet: nobody is added here and LOCAL2_API_TOKEN "
    "is not set. Add a person (local2 users add NAME) and sign in with their name and token, "
    "or set LOCAL2_API_TOKEN and restart the server."
)


class SignedOut(Local2Error):
    """The browser's sign-in no longer names a person here (removed since, or none)."""


def signed_out() -> SignedOut:
    return SignedOut(
        "You are not signed in to this LoCAL2 server as anyone it knows.",
        "Log out (the button at the top, or open /logout) and sign in with your name and token.",
    )


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


@dataclass(frozen=True)
class Credential:
    """What a browser signed in with: a person's token (its hash, to compare with the one
    they hold now) or the single token (local's)."""

    name: str
    token_hash: str | None = None  # None: the single LOCAL2_API_TOKEN
    alone: bool = False  # the single token while nobody was configured (under any name)

    def holds(self, configured: bool, current: str | None) -> bool:
        """Whether the sign-in still stands: ``configured``, whether anyone is configured
        now; ``current``, the hash of the token the person holds now (None: no such person)."""
        if self.token_hash is None:
            return not (self.alone and configured)  # a name typed before names meant anything
        return current is not None and _same(self.token_hash, current)


# The credential SignIn.login just accepted, for SignIns to keep beside the cookie Gradio
# makes next, in the same request (Gradio awaits ``auth`` in the login route itself).
_ACCEPTED: ContextVar[Credential | None] = ContextVar("local2_accepted", default=None)


class SignIns(dict[str, str]):
    """Gradio's sign-ins (``{cookie: name}``, its ``App.tokens``), each with the
    :class:`Credential` it was made with; one that comes without one is not kept."""

    def __init__(self) -> None:
        super().__init__()
        self.credentials: dict[str, Credential] = {}

    def __setitem__(self, cookie: str, name: str) -> None:
        credential = _ACCEPTED.get()
        _ACCEPTED.set(None)
        if credential is None:
            return  # not a sign-in SignIn.login accepted: nobody is signed in by it
        self.credentials[cookie] = credential
        super().__setitem__(cookie, name)

    def __delitem__(self, cookie: str) -> None:
        self.forget(cookie)

    def forget(self, cookie: str) -> None:
        self.credentials.pop(cookie, None)
        self.pop(cookie, None)

    def clear(self) -> None:
        self.credentials.clear()
        super().clear()


@dataclass
class SignIn:
    """Who may sign in on the login page, and whether the page is needed at all."""

    access: Access
    token: str | None = None  # LOCAL2_API_TOKEN (None: not set)
    guard: Guard = field(default_factory=Guard)  # the HTTP API's: one rule for both

    def check(self, username: str, password: str) -> bool:
        """A person's name and their token; with nobody configured, the single token (any
        name, as always); the name ``local`` with the single token is local."""
        return self.credential(username, password) is not None

    def credential(self, username: str, password: str) -> Credential | None:
        """The :class:`Credential` this name and password sign in with, or None."""
        name = username.strip().lower()
        if not self.access.configured():
            return Credential(name, alone=True) if self._single_token(password) else None
        if name == LOCAL_NAME:
            return Credential(name) if self._single_token(password) else None
        person = self.access.token_holder(password) if password else None
        if person is None or not _same(name, person.name):  # the token is theirs
            return None
        return Credential(person.name, token_hash(password))

    def _single_token(self, password: str) -> bool:
        return bool(self.token and password) and _same(password, self.token or "")

    def needed(self, configured: bool) -> bool:
        """Whether the app asks for a sign-in: whenever a request that brings no credential
        is not local's (beyond loopback, or once anyone was configured)."""
        return not self.guard.anonymous_is_local(configured)

    def message(self, configured: bool) -> str:
        if not configured:
            return TOKEN_MESSAGE if self.token else NO_ONE_MESSAGE
        return PEOPLE_MESSAGE + (LOCAL_TOO if self.token else "")

    async def login(self, username: str, password: str) -> bool:
        """Gradio's ``auth``: a coroutine function, so Gradio awaits it (an object with an
        async ``__call__`` would not be awaited, and its coroutine is truthy). The lookup
        may reach Postgres, so it runs in a thread; the credential accepted is handed to
        :class:`SignIns` through the request's context."""
        credential = await anyio.to_thread.run_sync(self.credential, username, password)
        _ACCEPTED.set(credential)
        return credential is not None


@dataclass
class SignInSwitch:
    """ASGI middleware: before each request to the app, turns its login page on or off
    (Gradio reads its ``auth`` per request) as people are added or removed, and forgets the
    browser's sign-in if its credential is no longer its person's."""

    app: ASGIApp
    gradio: Any  # the mounted gradio.routes.App
    sign_in: SignIn
    api_routes: Sequence[BaseRoute] = ()  # the HTTP API's, beside the mounted app
    sign_ins: SignIns = field(default_factory=SignIns)

    def __post_init__(self) -> None:
        self.gradio.tokens = self.sign_ins
        self.update(())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not self.is_api(scope):
            await anyio.to_thread.run_sync(self.update, self.cookies(scope))
        await self.app(scope, receive, send)

    def is_api(self, scope: Scope) -> bool:
        """Whether the request is for one of the HTTP API's routes (they say who they are
        for themselves, :mod:`local2.service.sign_in`): no store query, no thread hop."""
        return any(route.matches(scope)[0] is Match.FULL for route in self.api_routes)

    def cookies(self, scope: Scope) -> list[str]:
        """The sign-in cookies the request carries (Gradio reads either)."""
        jar = HTTPConnection(scope).cookies
        cookie_id = self.gradio.cookie_id
        names = (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}")
        return list(dict.fromkeys(jar[n] for n in names if jar.get(n)))

    def update(self, cookies: Sequence[str]) -> None:
        """One small query per sign-in the request carries (none: one for whether anyone
        is configured)."""
        access = self.sign_in.access
        configured: bool | None = None
        for cookie in cookies:
            if cookie not in self.sign_ins:
                continue
            credential = self.sign_ins.credentials.get(cookie)
            name = credential.name if credential is not None and credential.token_hash else None
            configured, current = access.standing(name)
            if credential is None or not credential.holds(configured, current):
                self.sign_ins.forget(cookie)  # rotated, removed, or re-created since
        if configured is None:
            configured = access.standing(None)[0]
        self.gradio.auth = self.sign_in.login if self.sign_in.needed(configured) else None
        self.gradio.get_blocks().auth_message = self.sign_in.message(configured)


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
    configured = access.configured()
    if not name:
        if proxied or configured:
            raise signed_out()  # Gradio lets no one through unsigned: a handler called bare
        return LOCAL
    if name == LOCAL_NAME:
        return LOCAL
    if proxied:  # the proxy vouches for the name; whether they are an admin is ours to say
        return access.named(name) or Person(name)
    if not configured:
        return LOCAL  # signed in with the single token, under any name, as always
    person = access.named(name)
    if person is None:
        raise signed_out()  # removed since they signed in
    return person
