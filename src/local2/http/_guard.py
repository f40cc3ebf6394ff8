"""Who may talk to the server: Host and Origin checks, no stray CORS, and a page policy.

A web page the person opens can make their browser send requests to a loopback server: by
DNS rebinding (its own host name, resolved to 127.0.0.1: the request carries
``Host: evil.example``) or by a cross-site POST (``Origin: https://evil.example``). Ollama
closed the same hole in CVE-2024-28224. :class:`RequestGuard` answers only requests whose
``Host`` names this server and refuses state-changing requests from a foreign ``Origin``;
it also removes the CORS headers Gradio adds for other local origins unless configured.

:func:`content_security_policy` is the browser's half: the app's pages may load images,
frames, fonts and connections only from the server itself (and ``ui.image_hosts``), so
nothing in an answer can make the browser reach another host by itself.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from local2.ports import split_host

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
HOST_SETTING = "server.allowed_hosts"
ORIGIN_SETTING = "server.cors_origins"


@dataclass(frozen=True)
class HostRules:
    """Host names this server answers to: exact names and ``*.suffix`` patterns."""

    names: frozenset[str]
    suffixes: tuple[str, ...]

    @classmethod
    def build(cls, bind_host: str, extra: Iterable[str] = ()) -> HostRules:
        """Loopback names, this machine's hostname, ``*.localhost``, the bind address and
        ``extra`` (from ``server.allowed_hosts``; ``*.example.org`` allows subdomains)."""
        names = set(LOOPBACK_NAMES) | {socket.gethostname().lower()}
        suffixes = [".localhost"]
        bind = bind_host.strip("[]").lower()
        if bind and bind not in ("0.0.0.0", "::"):
            names.add(bind)
        for item in extra:
            item = item.strip().lower().rstrip(".")
            if item.startswith("*."):
                suffixes.append(item[1:])
            elif item:
                names.add(split_host(item)[0] or item)
        return cls(frozenset(names), tuple(suffixes))

    def allows(self, host: str) -> bool:
        name, _ = split_host(host)
        return bool(name) and (name in self.names or name.endswith(self.suffixes))


class RequestGuard:
    """ASGI middleware: refuse foreign ``Host`` names and cross-site state changes.

    - ``Host`` must match :class:`HostRules` (any port), else 403.
    - A request that can change state (not GET/HEAD/OPTIONS, and every WebSocket) whose
      ``Origin`` is present and is neither this server's own (an allowed host on the same
      port) nor listed in ``cors_origins`` gets 403. Scripts send no ``Origin`` and pass.
    - Under ``every_request`` (``/mcp``) that holds for every method: a GET there opens a
      stream of the session's messages, which the MCP specification guards the same way.
    - CORS response headers are dropped unless the request's origin is in ``cors_origins``.
    """

    def __init__(
        self,
        app: ASGIApp,
        rules: HostRules,
        cors_origins: Iterable[str] = (),
        every_request: Iterable[str] = (),
    ):
        self.app = app
        self.rules = rules
        self.cors_origins = frozenset(o.rstrip("/").lower() for o in cors_origins)
        self.every_request = tuple(every_request)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not self.rules.allows(host):
            await self._refuse(
                scope,
                receive,
                send,
                f"Host {host!r} is not served here. To reach LoCAL2 by that name, add it to "
                f"{HOST_SETTING} in the config.",
            )
            return
        origin = headers.get("origin")
        checked = self._checked(scope)
        if origin is not None and checked and not self._own_or_listed(origin, host):
            what = "change anything" if checked == "changes" else f"reach {scope['path']}"
            await self._refuse(
                scope,
                receive,
                send,
                f"Requests from the origin {origin!r} may not {what} here. To allow "
                f"that site, add it to {ORIGIN_SETTING} in the config.",
            )
            return
        if origin is not None and origin.rstrip("/").lower() in self.cors_origins:
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _without_cors(send))

    def _checked(self, scope: Scope) -> Literal["changes", "guarded", ""]:
        """Why the request's Origin must be this server's own (or a listed one): it may
        change state, or its path is guarded for every request; "" when it need not."""
        if scope["type"] == "websocket" or scope.get("method") not in SAFE_METHODS:
            return "changes"
        path = str(scope.get("path", ""))
        guarded = any(path == p or path.startswith(f"{p}/") for p in self.every_request)
        return "guarded" if guarded else ""

    def _own_or_listed(self, origin: str, host: str) -> bool:
        if origin.rstrip("/").lower() in self.cors_origins:
            return True
        parts = urlsplit(origin)
        try:
            origin_port = parts.port
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False  # "null", file://, extensions: never our own page
        _, host_port = split_host(host)
        default = 443 if parts.scheme == "https" else 80
        name = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return self.rules.allows(name) and (origin_port or default) == (host_port or default)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, message: str) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})
            return
        # lazy: starlette, python_multipart: ~44 ms, 24 modules at import
        from starlette.responses import JSONResponse

        await JSONResponse({"detail": message}, status_code=403)(scope, receive, send)


def _without_cors(send: Send) -> Send:
    """Wrap ``send`` so responses carry no ``Access-Control-*`` headers."""

    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name in [k for k in headers if k.lower().startswith("access-control-")]:
                del headers[name]
        await send(message)

    return sender


def content_security_policy(image_hosts: Iterable[str] = ()) -> str:
    """The app's CSP: scripts and styles as Gradio needs them, everything that could reach
    another host (images, media, frames, fonts, fetches, prefetch) limited to this server
    and the allow-listed image hosts."""
    images = " ".join(["'self'", "data:", "blob:", *(_source(h) for h in image_hosts)])
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:",
            "style-src 'self' 'unsafe-inline'",
            f"img-src {images}",
            "media-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "frame-src 'self'",
            "worker-src 'self' blob:",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
        ]
    )


def _source(host: str) -> str:
    """A CSP source for an allow-listed image host: ``cdn.example.org``, ``host:port``,
    ``*.example.org`` or ``https://host`` (without a scheme, the page's own applies)."""
    return host.strip()


class ContentSecurityPolicy:
    """ASGI middleware adding a ``Content-Security-Policy`` header to every HTTP response."""

    def __init__(self, app: ASGIApp, policy: str):
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sender(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)["Content-Security-Policy"] = self.policy
            await send(message)

        await self.app(scope, receive, sender)
