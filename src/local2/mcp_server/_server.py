"""LoCAL2 as an MCP server (the official ``mcp`` SDK's :class:`MCPServer`): over stdio for a
desktop client (``local2 mcp``), and over streamable HTTP at ``/mcp`` on ``local2 serve``
(:mod:`local2.mcp_server._over_http`).

On HTTP the transport sits behind the server's own guards: every request passes the
Host/Origin check (:class:`~local2.http._guard.RequestGuard`, around the whole app, so the
SDK's own DNS-rebinding check is left off rather than kept as a second, different list;
there, every request to ``/mcp``, a GET's event stream too, has its Origin checked, as the
MCP specification asks) and says who it is as on every API route
(:class:`~local2.mcp_server._over_http.PersonGate`). Over stdio the server answers before the
agent has opened (:mod:`local2.mcp_server._opening`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import anyio
from mcp.server.context import ServerMiddleware, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    EmptyResult,
    GetPromptResult,
    InputRequiredResult,
    ListResourcesResult,
    PaginatedRequestParams,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
    UnsubscribeRequestParams,
)
from pydantic import ValidationError

from local2 import __version__
from local2.config import quiet_logging
from local2.contracts import Person
from local2.errors import InvalidInput, Local2Error, NotFound
from local2.mcp_server._audit import CallAudit, Transport
from local2.mcp_server._caller import caller
from local2.mcp_server._changes import ChangeWatch, Fingerprint, State, fingerprint, state_of, still
from local2.mcp_server._chat_tools import add_chat_tools
from local2.mcp_server._failures import bad_arguments, crashed, mcp_error, unknown_tool
from local2.mcp_server._listing import page
from local2.mcp_server._opening import OpeningAgent, WaitForAgent
from local2.mcp_server._research_tools import add_research_tools
from local2.mcp_server._resources import add_resources
from local2.mcp_server._watch_tools import add_watch_tools

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent

logger = logging.getLogger(__name__)
SDK_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
INSTRUCTIONS = (
    "LoCAL2 is the person's local research assistant. ask: a chat turn in a session of "
    "theirs. research: a verified research report with its sources (a long run: wait=false, "
    "then research_status / research_result; a pause: research_input). search, "
    "read_document, list_documents: their own documents, folders and memory. recall_memory "
    "reads their memory; remember writes to it."
)


class Local2Server(MCPServer[Any]):
    """The SDK's server, with arguments a tool's input schema refuses, a tool it does not
    have, and a prompt it does not have or arguments a prompt lacks, answered as LoCAL2
    answers bad input (the SDK would say them in its own words, before any tool runs, and a
    prompt's with JSON-RPC code 0 and a traceback); ``resources/list`` listing the caller's
    reports and documents (:mod:`local2.mcp_server._listing`); and what changes of them told
    to a session that listed them or subscribed to one, or to a 2026-07-28 client's listen
    stream (:mod:`local2.mcp_server._changes`)."""

    def __init__(self, agent: Agent, person: Person | None, **settings: Any) -> None:
        super().__init__(**settings)
        self.agent = agent
        self.person = person
        self.watch = ChangeWatch(agent)
        declare_resources_changed(self._lowlevel_server)
        lowlevel = self._lowlevel_server
        lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, self.subscribe)
        lowlevel.add_request_handler(
            "resources/unsubscribe", UnsubscribeRequestParams, self.unsubscribe
        )
        lowlevel.add_request_handler(
            "subscriptions/listen", SubscriptionsListenRequestParams, self.listen
        )

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],  # a tool's arguments as the client sent them
        context: Context[Any, Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        if self._tool_manager.get_tool(name) is None:
            return unknown_tool(name, [t.name for t in self._tool_manager.list_tools()])
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:  # the SDK's: refused arguments, a crash
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError):  # the tool's result broke its schema
                logger.exception("MCP tool %s failed", name)
                return crashed()
            if not isinstance(cause, ValidationError):
                raise
            return bad_arguments(cause.errors())

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,  # a prompt's arguments as the client sent them
        context: Context[Any, Any] | None = None,
    ) -> GetPromptResult | InputRequiredResult:
        try:
            self._check_prompt(name, arguments or {})
        except Local2Error as exc:  # the specification's -32602 for both
            raise mcp_error(exc, code=INVALID_PARAMS) from None
        return await super().get_prompt(name, arguments, context)

    # arguments: a prompt's, as the client sent them
    def _check_prompt(self, name: str, arguments: dict[str, Any]) -> None:
        """A prompt this server has, with the arguments it needs (-32602 otherwise, as the
        MCP specification asks, in plain words)."""
        prompt = self._prompt_manager.get_prompt(name)
        if prompt is None:
            known = ", ".join(sorted(p.name for p in self._prompt_manager.list_prompts()))
            raise NotFound(
                f"No prompt {name!r} here.", f"Get one of: {known} (prompts/list describes them)."
            )
        needed = [a.name for a in prompt.arguments or [] if a.required]
        missing = [n for n in needed if arguments.get(n) in (None, "")]
        if missing:
            said = ", ".join(missing)
            plural = "s" if len(missing) > 1 else ""
            raise InvalidInput(
                f"Prompt {name!r} needs the argument{plural} {said}.",
                f"Send {said} in arguments (prompts/list shows each prompt's arguments).",
            )

    async def _handle_list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        who = caller(self.person)
        cursor = params.cursor if params is not None else None

        def listed() -> tuple[ListResourcesResult, Fingerprint]:
            return page(self.agent, who, cursor), fingerprint(self.agent, who)

        try:
            result, seen = await anyio.to_thread.run_sync(listed)
        except Local2Error as exc:  # a cursor this server never gave
            raise mcp_error(exc) from None
        self.watch.listed(ctx, who, seen)  # told when it changes
        return result

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: SubscribeRequestParams
    ) -> EmptyResult:
        """``resources/subscribe``: the session is told ``notifications/resources/updated``
        when the resource changes (:mod:`local2.mcp_server._changes`); a URI that names
        nothing of the caller's is refused as reading it is."""
        who = caller(self.person)
        uri = str(params.uri)
        try:
            state = await anyio.to_thread.run_sync(state_of, self.agent, who, uri)
        except Local2Error as exc:
            raise mcp_error(exc, ctx.protocol_version) from None
        self.watch.subscribed(ctx, who, uri, state)
        return EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        """``resources/unsubscribe``: no more updates of it (one never subscribed to: no-op)."""
        self.watch.unsubscribed(ctx, str(params.uri))
        return EmptyResult()

    async def listen(
        self, ctx: ServerRequestContext[Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        """``subscriptions/listen`` (2026-07-28): the stream hears the caller's listing
        change and the resources it named that are the caller's (the acknowledgement names
        only those: someone else's is as unknown as none) until it ends, from the same
        watch as a session's notifications. The SDK's handler serves the stream, over a
        bus of its own so that what it hears is the caller's alone."""
        who = caller(self.person)
        asked = params.notifications
        uris = list(dict.fromkeys(asked.resource_subscriptions or ()))

        def now() -> tuple[Fingerprint | None, dict[str, State]]:
            listing = fingerprint(self.agent, who) if asked.resources_list_changed else None
            return listing, {uri: still(self.agent, who, uri) for uri in uris}

        listing, states = await anyio.to_thread.run_sync(now)
        known: dict[str, State] = {uri: s for uri, s in states.items() if s is not None}
        honored = asked.model_copy(update={"resource_subscriptions": list(known) or None})
        bus = InMemorySubscriptionBus()
        key = f"listen {ctx.request_id} {id(bus)}"
        self.watch.listening(key, who, bus, listing, known)
        try:
            stream = ListenHandler(bus)
            return await stream(ctx, params.model_copy(update={"notifications": honored}))
        finally:
            self.watch.stop(key)


def declare_resources_changed(lowlevel: Server[Any]) -> None:
    """Say ``resources.listChanged`` in ``initialize``'s capabilities (changes.py sends
    the notification). The SDK takes that only as an argument of the lowlevel server's
    ``create_initialization_options``, which its transports call with none."""
    made = lowlevel.create_initialization_options

    def with_changes(
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,  # the SDK's
        extensions: dict[str, dict[str, Any]] | None = None,  # the SDK's: SEP-2133 settings
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(resources_changed=True)
        return made(options, experimental_capabilities, extensions)

    lowlevel.create_initialization_options = with_changes  # type: ignore[method-assign]


def build_server(
    agent: Agent,
    person: Person | None = None,
    transport: Transport = "stdio",
    first: Sequence[ServerMiddleware[Any]] = (),
) -> MCPServer:
    """The MCP server over ``agent``: every call is ``person``'s (stdio), or, with none, the
    person its HTTP request was signed in as (:class:`~local2.mcp_server._over_http.PersonGate`);
    each written to the audit log with them (:class:`CallAudit`), after the ``first``
    middleware."""
    # Before the SDK's server, whose logging.basicConfig is then a no-op: its handler would
    # let dependencies' DEBUG lines through to the host's stderr.
    level = logging.getLevelName(quiet_logging(agent.settings.system.log_level))
    server: MCPServer = Local2Server(
        agent,
        person,
        name="local2",
        title="LoCAL2",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level=level if level in SDK_LEVELS else "WARNING",
        middleware=[*first, CallAudit(agent, person, transport)],
    )
    add_chat_tools(server, agent, person)
    add_research_tools(server, agent, person)
    add_watch_tools(server, agent, person)
    add_resources(server, agent, person)
    return server


def serve_stdio(opening: OpeningAgent, person: Person) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes them, answering
    from the start while ``opening`` opens the agent (:mod:`local2.mcp_server._opening`)."""
    # The opening agent stands in for the agent: WaitForAgent holds back every request that
    # reads it until it has opened, and its settings are there from the start.
    server = build_server(cast("Agent", opening), person, first=[WaitForAgent(opening)])
    opening.start()
    anyio.run(server.run_stdio_async)
