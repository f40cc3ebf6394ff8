"""Telling a host what changed: ``notifications/resources/list_changed`` to a session that
listed resources (a research run of the person's finished, a document of theirs was added or
removed), ``notifications/resources/updated`` to one that subscribed to a resource
(``resources/subscribe``: a research report as its run goes on and when it ends, a
document), and both on the ``subscriptions/listen`` streams of 2026-07-28 clients.

Those changes come from anywhere: this server's ``research`` tool, the web app or the API
beside ``/mcp``, another ``local2`` process on the same data directory (``local2 documents
add``, ``local2 research``). So nothing here waits to be told: what each watcher watches (its
listing, each resource it subscribed to) is read again every :data:`POLL_S` seconds, in a
worker thread, and compared with what it was, and the watcher is told once per change.

A watcher is a session (the HTTP one its ``Mcp-Session-Id`` names, or the one stdio
connection; the SDK hands each request a session object of its own, which sends on the
connection's channel after the request too), told on its own channel; or a listen stream
(2026-07-28, where a session's channel carries no change notifications), told through a
bus of its own that the SDK's :class:`~mcp.server.subscriptions.ListenHandler` serves. A
session that never listed nor subscribed is not watched; one that has closed, or has shown
no interest for :data:`WATCH_FOR_S` (no listing, no subscription, no change of a resource
it subscribed to), is dropped. A listen stream is watched until it ends.

A resource that is not the person's (someone else's run, an id that names nothing) is
unknown, to subscribe to as to read; one that goes away after a subscription (a document
removed) is told once as updated, and reading it then says it is gone.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated, SubscriptionBus
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from local2.contracts import Person
from local2.errors import InvalidInput, NotFound
from local2.mcp_server._listing import everything, short

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent

logger = logging.getLogger(__name__)
POLL_S = 2.0  # how stale a host's view may get: one small store read a watched thing
WATCH_FOR_S = 3600.0  # a session told of a change lists again; one that has not is let go
STDIO = "stdio"  # the one session of a stdio server
Fingerprint = tuple[tuple[str, float], ...]  # each listed item's URI and time
State = str | None  # a digest of what a resource reads as now; None: not the person's
REPORT = re.compile(r"local2://research/(?P<run_id>[^/]+)")
DOCUMENT = re.compile(r"local2://documents/(?P<document_id>[^/]+)(?:/page/[^/]+)?")
SUBSCRIBE_FIX = (
    "Subscribe to a URI that resources/list gave, or to local2://research/{run_id} (a run "
    "research or list_research_runs returned) or local2://documents/{document_id} (one "
    "list_documents returned)."
)


def fingerprint(agent: Agent, person: Person) -> Fingerprint:
    """What the person's listing is now, as far as a change to it goes."""
    return tuple((str(listed.resource.uri), listed.when) for listed in everything(agent, person))


def state_of(agent: Agent, person: Person, uri: str) -> str:
    """What the resource at ``uri`` is now, as a digest: a run's whole state so far (status,
    steps, sources, report), a document's record (a page's is its document's). One that is
    not the person's is :class:`~local2.errors.NotFound`, as reading it is."""
    shown: Any
    try:
        if report := REPORT.fullmatch(uri):
            shown = agent.research.payload(report["run_id"], person, agent.access)
        elif document := DOCUMENT.fullmatch(uri):
            shown = agent.documents.get(person, document["document_id"])
        else:
            raise NotFound(f"No resource {short(uri, 80)!r} here.", SUBSCRIBE_FIX)
    except InvalidInput as exc:  # an id no run could have: its fix is a URI's, not a tool's
        raise InvalidInput(exc.message, SUBSCRIBE_FIX) from None
    said = json.dumps(shown, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(said.encode()).hexdigest()


def still(agent: Agent, person: Person, uri: str) -> State:
    """:func:`state_of`, with a resource that has gone as None."""
    try:
        return state_of(agent, person, uri)
    except NotFound:
        return None


class Tell(Protocol):
    """How a watcher is told."""

    async def list_changed(self) -> None: ...

    async def updated(self, uri: str) -> None: ...


@dataclass
class OnSession:
    """On a session's own channel (stdio, or the HTTP session's event stream)."""

    session: ServerSession  # the last request's: sends on the connection's channel

    async def list_changed(self) -> None:
        await self.session.send_resource_list_changed()

    async def updated(self, uri: str) -> None:
        await self.session.send_resource_updated(uri)


@dataclass
class OnStream:
    """On one ``subscriptions/listen`` stream, through its own bus (the SDK's handler
    stamps each event with the stream's id and drops what its filter did not ask for)."""

    bus: SubscriptionBus

    async def list_changed(self) -> None:
        await self.bus.publish(ResourcesListChanged())

    async def updated(self, uri: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=uri))


@dataclass
class Watched:
    tell: Tell
    person: Person
    listing: Fingerprint | None = None  # None: its listing is not watched
    resources: dict[str, State] = field(default_factory=dict)  # subscribed: URI, state
    lasting: bool = False  # a listen stream: watched until it ends
    active_at: float = field(default_factory=time.monotonic)

    @property
    def idle(self) -> bool:
        return not self.lasting and time.monotonic() - self.active_at > WATCH_FOR_S


def session_key(ctx: ServerRequestContext[Any, Any]) -> str:
    """Which session a request is of: its HTTP session id, or the stdio connection."""
    request = ctx.request
    headers = getattr(request, "headers", None)  # an HTTP request's (Starlette's Request)
    return str(headers.get("mcp-session-id", "")) if headers is not None else STDIO


def modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    """A request of the 2026-07-28 protocol, whose changes go on listen streams only."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


class ChangeWatch:
    """The watchers, and the one task that reads what they watch again (running while
    there is one)."""

    def __init__(self, agent: Agent, poll_s: float = POLL_S) -> None:
        self.agent = agent
        self.poll_s = poll_s
        self.sessions: dict[str, Watched] = {}  # by session key, or a listen stream's
        self.task: asyncio.Task[None] | None = None

    def session(self, ctx: ServerRequestContext[Any, Any], person: Person) -> Watched:
        """The watcher for the session of request ``ctx``, which says it still cares."""
        key = session_key(ctx)
        watched = self.sessions.get(key)
        if watched is None or watched.person.name != person.name:
            watched = self.sessions[key] = Watched(OnSession(ctx.session), person)
        watched.tell = OnSession(ctx.session)
        watched.active_at = time.monotonic()
        self.start()
        return watched

    def listed(
        self, ctx: ServerRequestContext[Any, Any], person: Person, seen: Fingerprint
    ) -> None:
        """The request ``ctx`` was just answered the listing ``seen``: tell its session
        when that changes."""
        if not modern(ctx):
            self.session(ctx, person).listing = seen

    def subscribed(
        self, ctx: ServerRequestContext[Any, Any], person: Person, uri: str, state: str
    ) -> None:
        """The session of ``ctx`` subscribed to ``uri``, which reads as ``state`` now."""
        self.session(ctx, person).resources[uri] = state

    def unsubscribed(self, ctx: ServerRequestContext[Any, Any], uri: str) -> None:
        key = session_key(ctx)
        watched = self.sessions.get(key)
        if watched is not None:
            watched.resources.pop(uri, None)
            if watched.listing is None and not watched.resources:
                self.sessions.pop(key, None)

    def listening(
        self,
        key: str,
        person: Person,
        bus: SubscriptionBus,
        listing: Fingerprint | None,
        resources: dict[str, State],
    ) -> None:
        """A listen stream (``key``) opened: tell ``bus`` of changes to what it asked for."""
        self.sessions[key] = Watched(OnStream(bus), person, listing, resources, lasting=True)
        self.start()

    def stop(self, key: str) -> None:
        self.sessions.pop(key, None)

    def start(self) -> None:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self.watch())

    async def watch(self) -> None:
        while self.sessions:
            await anyio.sleep(self.poll_s)
            for key, watched in list(self.sessions.items()):
                if watched.idle:
                    self.sessions.pop(key, None)
                else:
                    await self.check(key, watched)

    def read(self, watched: Watched) -> tuple[Fingerprint | None, dict[str, State]]:
        listing = None if watched.listing is None else fingerprint(self.agent, watched.person)
        states = {uri: still(self.agent, watched.person, uri) for uri in list(watched.resources)}
        return listing, states

    async def check(self, key: str, watched: Watched) -> None:
        try:
            listing, states = await anyio.to_thread.run_sync(self.read, watched)
        except Exception:  # the store is away for a moment: the next round reads it again
            logger.warning("Reading what an MCP host watches again failed", exc_info=True)
            return
        try:
            if listing is not None and watched.listing is not None and listing != watched.listing:
                watched.listing = listing
                await watched.tell.list_changed()
            for uri, state in states.items():
                if uri in watched.resources and watched.resources[uri] != state:
                    watched.resources[uri] = state
                    watched.active_at = time.monotonic()  # a run going on keeps it watched
                    await watched.tell.updated(uri)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the client left
            self.sessions.pop(key, None)
