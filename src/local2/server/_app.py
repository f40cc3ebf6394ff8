"""One server for the app, the HTTP API and ``/mcp``: FastAPI routes first, the Gradio app
at ``/`` (:func:`local2.ui.mount_ui`). A host, above the surfaces it puts together on one
port: they are independent of one another (pyproject.toml's contracts).

LoCAL2 serves the app itself (uvicorn), so there is no Gradio share link or tunnel at all.
Every request passes :class:`~local2.http._guard.RequestGuard` (Host and Origin checks)
and every response carries the app's Content-Security-Policy. Bound to loopback, with nobody
added, nothing is asked; beyond it every API call needs the bearer token from
``LOCAL2_API_TOKEN`` (the app asks for it as its password; it means local on any bind) and
``server.allowed_hosts`` must name the server. With people configured, each signs in to the
app with their name and token, or a trusted proxy names them (``local2.ui``'s sign-in).
The API and the app share one :class:`~local2.service.sign_in.Guard`: what a request without
a credential may do never widens while the server runs.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path

import uvicorn
from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

from local2.config import Settings
from local2.errors import UnsafeToServe
from local2.http import (
    ContentSecurityPolicy,
    HostRules,
    RequestGuard,
    StripUntrustedUser,
    content_security_policy,
    create_api,
    require_token,
)
from local2.mcp_server import MCP_PATH, mount_mcp
from local2.ports import is_loopback
from local2.service import Agent, Identify, identify
from local2.storage import private_dir
from local2.ui import mount_ui

GRADIO_TEMP_DIR = "GRADIO_TEMP_DIR"  # where Gradio keeps the files it serves


def create_app(
    agent: Agent,
    *,
    ui: bool = True,
    token: str | None = None,
    host: str = "127.0.0.1",
    port: int = 7860,
) -> FastAPI:
    """The FastAPI app: LoCAL2's API routes, plus the Gradio app at ``/`` when ``ui``,
    behind the Host/Origin guard and the page policy."""
    settings = agent.settings
    who = identify(agent.access, token, settings.server, loopback=is_loopback(host))
    app = create_api(agent, app=FastAPI(title="LoCAL2", version="0.1.0"), who=who)
    mount_mcp(app, agent, who)  # /mcp: LoCAL2 as an MCP server, each request a person's
    add_guards(app, settings, host, who)
    if not ui:
        return app
    return mount_ui(app, agent, token, who, host, port)


def add_guards(app: FastAPI, settings: Settings, host: str, who: Identify) -> None:
    """Put the page policy, the Host/Origin guard, CORS (when configured) and the stripping
    of an untrusted user header around every route."""
    # Added last, so outermost: nothing reaches a route (Gradio's included) unchecked.
    app.add_middleware(
        ContentSecurityPolicy, policy=content_security_policy(settings.ui.image_hosts)
    )
    app.add_middleware(
        RequestGuard,
        rules=HostRules.build(host, settings.server.allowed_hosts),
        cors_origins=settings.server.cors_origins,
        every_request=(MCP_PATH,),  # MCP: every request's Origin (a GET's stream too)
    )
    if settings.server.cors_origins:
        # Gradio adds its own CORS for local origins unless the parent app configures CORS.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.server.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
        )
    header = who.user_header
    if header:  # around every route and the app: no one else's header reaches them
        app.add_middleware(StripUntrustedUser, header=header, proxies=who.proxies)


def require_allowed_hosts(host: str, allowed: list[str]) -> None:
    """Beyond loopback the names people use must be configured: refuse to start otherwise."""
    if not is_loopback(host) and not allowed:
        example = host_example(host)
        raise UnsafeToServe(
            f"Serving on {host} (beyond this machine) needs the host names people will use "
            f"in server.allowed_hosts (e.g. [{example}]); other Host headers get 403.",
            f"Add them to server.yaml in your config directory: allowed_hosts: [{example}]",
        )


def host_example(host: str) -> str:
    """A name people could use to reach ``host``: this machine's name when bound to every
    address, else the address itself."""
    address = host.strip("[]")
    if address in ("0.0.0.0", "::", "::0", ""):
        return socket.gethostname() or "localhost"
    return address


def keep_app_files_private(data_dir: Path) -> None:
    """Gradio copies every file the app hands out or takes in (report and arena downloads,
    uploads) into ``GRADIO_TEMP_DIR``, by default a folder of the machine's temp directory
    that its other users share: this server keeps them in ``<data_dir>/cache/gradio``
    instead, readable only by its own user (unless the operator named a folder). Before
    the app is built: Gradio reads the setting as its parts are made."""
    if not os.environ.get(GRADIO_TEMP_DIR):
        os.environ[GRADIO_TEMP_DIR] = str(private_dir(data_dir / "cache" / "gradio"))


def bind(host: str, port: int) -> socket.socket:
    """Bind and listen before serving, so port 0 works and the printed address already
    accepts connections (they wait in the backlog until the app is up)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def serve(
    agent: Agent,
    host: str = "127.0.0.1",
    port: int = 7860,
    ui: bool = True,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until interrupted, the watches' scheduler running meanwhile (unless
    ``watch.enabled`` is false). Beyond loopback without ``LOCAL2_API_TOKEN`` (or people
    added, each with a token) or ``server.allowed_hosts``:
    :class:`~local2.errors.UnsafeToServe`."""
    token = require_token(host, people=agent.access.configured())
    require_allowed_hosts(host, agent.settings.server.allowed_hosts)
    if ui:
        keep_app_files_private(agent.settings.data_dir)
    sock = bind(host, port)
    app = create_app(agent, ui=ui, token=token, host=host, port=sock.getsockname()[1])
    agent.start_watching()  # watches' due runs, claimed once across every server process
    try:
        if on_ready is not None:
            on_ready(url_of(sock))
        # No access log: a feed reader's address carries its feed token (docs/watch.md).
        config = uvicorn.Config(app, log_level="warning", access_log=False)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        agent.stop_watching()
