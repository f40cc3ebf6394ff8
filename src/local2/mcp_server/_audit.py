"""Every MCP call in the audit log, with its caller.

A middleware of the SDK's server (it wraps every inbound request): each tool call, resource
read and prompt is written once it ends (answered, refused, failed or cancelled) with the
person it was for, the transport, what was called and with which arguments (secrets
redacted, as in a turn's record), and the ids of the turn or run it made
(:func:`local2.service.audit_call`). ``ask`` and ``research`` are also recorded as the turn
and the run they are.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from local2.contracts import Person
from local2.mcp_server._caller import caller
from local2.mcp_server._failures import said_in
from local2.service import audit_call

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent

Transport = Literal["stdio", "http"]
AUDITED = ("tools/call", "resources/read", "prompts/get")
MADE = ("session_id", "query_id", "run_id")  # the ids of what a call made, when it says them


def what_was_called(method: str, params: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """The tool's or prompt's name (a resource's URI) and the arguments it was given."""
    if method == "resources/read":
        return str(params.get("uri") or ""), {}
    arguments = params.get("arguments")
    return str(params.get("name") or ""), arguments if isinstance(arguments, Mapping) else {}


def how_it_ended(result: HandlerResult) -> tuple[str, str | None, dict[str, str]]:
    """``answered`` (with the ids it made) or ``refused`` (with why, from its text: an error
    result carries no structured content) for a call's result."""
    if isinstance(result, Mapping):
        if result.get("isError"):
            result = CallToolResult.model_validate(result)
        said = result.get("structuredContent") if isinstance(result, Mapping) else None
    else:
        said = getattr(result, "structured_content", None)
    if isinstance(result, CallToolResult) and result.is_error:
        refusal = said_in(result)
        return "refused", refusal["error"] if refusal else None, {}
    said = said if isinstance(said, Mapping) else {}
    return "answered", None, {k: str(said[k]) for k in MADE if said.get(k)}


class CallAudit:
    """The middleware: writes each call of ``agent``'s MCP server to its audit log."""

    def __init__(self, agent: Agent, person: Person | None, transport: Transport) -> None:
        self.agent = agent
        self.person = person
        self.transport = transport

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        if ctx.request_id is None or ctx.method not in AUDITED:
            return await call_next(ctx)
        who = caller(self.person)
        name, arguments = what_was_called(ctx.method, ctx.params or {})
        # what the call log records (storage.call_log.CallRecord), filled in as the call goes
        call: dict[str, Any] = {"person": who.name, "transport": self.transport}
        call |= {"method": ctx.method, "name": name, "outcome": "cancelled"}
        started = time.monotonic()
        try:
            result = await call_next(ctx)
            call["outcome"], call["error"], call["ids"] = how_it_ended(result)
            return result
        except MCPError as exc:  # a resource or prompt refused (JSON-RPC error)
            call["outcome"], call["error"] = "refused", exc.error.message
            raise
        except Exception as exc:
            call["outcome"], call["error"] = "failed", type(exc).__name__
            raise
        finally:
            call["duration_s"] = round(time.monotonic() - started, 3)
            with anyio.CancelScope(shield=True):  # a cancelled call is written down too
                await anyio.to_thread.run_sync(audit_call, self.agent.settings, call, arguments)
