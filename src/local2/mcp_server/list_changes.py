"""``notifications/resources/list_changed``: a session that listed resources is told when its
listing changes (a research run of the person's finished, a document of theirs was added or
removed).

Those changes come from anywhere: this server's ``research`` tool, the web app or the API
beside ``/mcp``, another ``local2`` process on the same data directory (``local2 documents
add``, ``local2 research``). So nothing here waits to be told: each watched session's
listing is read again every :data:`POLL_S` seconds, in a worker thread, and compared with
what it was (each item's URI and time), and the session is told once per change. A session
that has not listed resources is never watched; one that has closed, or has not listed for
:data:`WATCH_FOR_S`, is dropped. A session is the HTTP one its ``Mcp-Session-Id`` names,
or the one stdio connection (the SDK hands each request a session object of its own, which
sends on the connection's channel after the request too). The SDK sends
the notification on the session's own channel (stdio, or the HTTP session's event stream);
clients of the 2026-07-28 protocol hear changes on ``subscriptions/listen`` streams only,
which this does not publish to.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession

from local2.contracts import Person
from local2.mcp_server.listing import everything

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent

logger = logging.getLogger(__name__)
POLL_S = 2.0  # how stale a host's resource list may get: one small store read a session
WATCH_FOR_S = 3600.0  # a host told of a change lists again; one that has not is let go
STDIO = "stdio"  # the one session of a stdio server
Fingerprint = tuple[tuple[str, float], ...]  # each listed item's URI and time


def fingerprint(agent: Agent, person: Person) -> Fingerprint:
    """What the person's listing is now, as far as a change to it goes."""
    return tuple((str(listed.resource.uri), listed.when) for listed in everything(agent, person))


@dataclass
class Watched:
    session: ServerSession  # the last listing's: sends on the connection's own channel
    person: Person
    seen: Fingerprint
    listed_at: float = field(default_factory=time.monotonic)


def session_key(ctx: ServerRequestContext[Any, Any]) -> str:
    """Which session a request is of: its HTTP session id, or the stdio connection."""
    request = ctx.request
    headers = getattr(request, "headers", None)  # an HTTP request's (Starlette's Request)
    return str(headers.get("mcp-session-id", "")) if headers is not None else STDIO


class ListingWatch:
    """The sessions that listed resources, and the one task that reads their listings again
    (running while there is a session to watch)."""

    def __init__(self, agent: Agent, poll_s: float = POLL_S) -> None:
        self.agent = agent
        self.poll_s = poll_s
        self.sessions: dict[str, Watched] = {}
        self.task: asyncio.Task[None] | None = None

    def listed(
        self, ctx: ServerRequestContext[Any, Any], person: Person, seen: Fingerprint
    ) -> None:
        """The request ``ctx`` was just answered the listing ``seen``: tell its session
        when that changes."""
        self.sessions[session_key(ctx)] = Watched(ctx.session, person, seen)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self.watch())

    async def watch(self) -> None:
        while self.sessions:
            await anyio.sleep(self.poll_s)
            for key, watched in list(self.sessions.items()):
                if time.monotonic() - watched.listed_at > WATCH_FOR_S:
                    self.sessions.pop(key, None)
                else:
                    await self.check(key, watched)

    async def check(self, key: str, watched: Watched) -> None:
        try:
            now = await anyio.to_thread.run_sync(fingerprint, self.agent, watched.person)
        except Exception:  # the store is away for a moment: the next round reads it again
            logger.warning("Reading the resource listing again failed", exc_info=True)
            return
        if now == watched.seen:
            return
        watched.seen = now
        try:
            await watched.session.send_resource_list_changed()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the client left
            self.sessions.pop(key, None)
