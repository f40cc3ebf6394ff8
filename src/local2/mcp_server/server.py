"""LoCAL2 as an MCP server (the official ``mcp`` SDK's :class:`MCPServer`): over stdio for a
desktop client (``local2 mcp``), and over streamable HTTP at ``/mcp`` on ``local2 serve``.

On HTTP the transport sits behind the server's own guards: every request passes the
Host/Origin check (:class:`~local2.http.guard.RequestGuard`, around the whole app, so the
SDK's own DNS-rebinding check is left off rather than kept as a second, different list;
there, every request to ``/mcp``, a GET's event stream too, has its Origin checked, as the
MCP specification asks) and says who it is as on every API route
(:class:`~local2.mcp_server.caller.PersonGate`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from fastapi import FastAPI
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    ListResourcesResult,
    PaginatedRequestParams,
)
from pydantic import ValidationError
from starlette.routing import Route

from local2 import __version__
from local2.config import quiet_logging
from local2.contracts import Person
from local2.errors import InvalidInput, Local2Error, NotFound
from local2.http import Identify
from local2.mcp_server.audit import CallAudit, Transport
from local2.mcp_server.caller import PersonGate, caller
from local2.mcp_server.chat_tools import add_chat_tools
from local2.mcp_server.failures import bad_arguments, crashed, mcp_error, unknown_tool
from local2.mcp_server.listing import page
from local2.mcp_server.research_tools import add_research_tools
from local2.mcp_server.resources import add_resources
from local2.service import Agent

logger = logging.getLogger(__name__)
SDK_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
MCP_PATH = "/mcp"  # every request to it has its Origin checked (add_guards)
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
    prompt's with JSON-RPC code 0 and a traceback); and ``resources/list`` listing the
    caller's reports and documents (:mod:`local2.mcp_server.listing`)."""

    def __init__(self, agent: Agent, person: Person | None, **settings: Any) -> None:
        super().__init__(**settings)
        self.agent = agent
        self.person = person

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
        try:
            return await anyio.to_thread.run_sync(page, self.agent, who, cursor)
        except Local2Error as exc:  # a cursor this server never gave
            raise mcp_error(exc) from None


def build_server(
    agent: Agent, person: Person | None = None, transport: Transport = "stdio"
) -> MCPServer:
    """The MCP server over ``agent``: every call is ``person``'s (stdio), or, with none, the
    person its HTTP request was signed in as (:class:`PersonGate`); each written to the
    audit log with them (:class:`CallAudit`)."""
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
        middleware=[CallAudit(agent, person, transport)],
    )
    add_chat_tools(server, agent, person)
    add_research_tools(server, agent, person)
    add_resources(server, agent, person)
    return server


def serve_stdio(agent: Agent, person: Person) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes them."""
    anyio.run(build_server(agent, person).run_stdio_async)


def mount_mcp(app: FastAPI, agent: Agent, who: Identify) -> MCPServer:
    """Serve MCP at ``/mcp`` in ``app`` (streamable HTTP), each request ``who`` says; its
    sessions are run while the app runs (its lifespan)."""
    server = build_server(agent, transport="http")
    no_second_check = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=no_second_check)
    manager = server.session_manager
    endpoint = PersonGate(StreamableHTTPASGIApp(manager), who)
    app.router.routes.append(
        Route(
            MCP_PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False
        )
    )
    before = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(running: Any) -> AsyncIterator[Any]:
        async with manager.run(), before(running) as state:
            yield state

    app.router.lifespan_context = lifespan
    return server
