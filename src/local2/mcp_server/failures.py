"""LoCAL2's errors as MCP errors, with the HTTP API's words.

A tool that is refused (an unknown id, a question that cannot be asked, memory that is off)
answers a tool result marked ``isError`` whose text and structured content are the API's
``{error, fix}`` (:func:`local2.http.errors.problem`) and the status the API would answer:
the model reads why, and what to do. Arguments the tool's schema refuses are said the same
way, in the words of the API's 422 for the same mistake (:func:`bad_arguments`). A resource
or prompt that is refused raises an MCP error (JSON-RPC) with the same words as its message
and ``{error, fix}`` as its data.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar, cast

from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, CallToolResult, TextContent

from local2.errors import InvalidInput, Local2Error, NotFound
from local2.http import invalid_fields, problem, status_of
from local2.mcp_server.shapes import Failure

RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource
ARGUMENTS_FIX = "Send the arguments the tool's input schema allows (tools/list shows it)."

P = ParamSpec("P")
R = TypeVar("R")


def failure(exc: Local2Error) -> Failure:
    """``{error, fix, status}`` for ``exc``: what the API says and the status it answers."""
    said = problem(exc)
    return {"error": str(said["error"]), "fix": str(said["fix"]), "status": status_of(exc)}


def failed_call(exc: Local2Error) -> CallToolResult:
    """A tool result that says ``exc`` as the API would."""
    said = failure(exc)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(said, ensure_ascii=False))],
        structured_content=dict(said),
        is_error=True,
    )


def bad_arguments(errors: Any) -> CallToolResult:
    """Arguments the tool's input schema refuses (a missing question, ``k`` out of range, a
    wrong type), said as the API's 422 says the same mistake in a body."""
    return failed_call(InvalidInput(invalid_fields(errors), ARGUMENTS_FIX))


def unknown_tool(name: str, known: list[str]) -> CallToolResult:
    """A tool this server does not have, said with the ones it has (the SDK would say only
    "Unknown tool")."""
    fix = f"Call one of: {', '.join(sorted(known))} (tools/list describes them)."
    return failed_call(NotFound(f"No tool {name!r} here.", fix))


def refusals(tool: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """``tool`` answering a :class:`~local2.errors.Local2Error` as :func:`failed_call`
    (the SDK passes a ``CallToolResult`` through as it is)."""

    @functools.wraps(tool)
    async def answering(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await tool(*args, **kwargs)
        except Local2Error as exc:
            return cast(R, failed_call(exc))

    return answering


def mcp_error(exc: Local2Error) -> MCPError:
    """The JSON-RPC error for ``exc`` (resources, prompts): its message is the API's
    ``error``, its data ``{error, fix, status}``."""
    said = failure(exc)
    if isinstance(exc, NotFound):
        code = RESOURCE_NOT_FOUND
    elif isinstance(exc, InvalidInput):
        code = INVALID_PARAMS
    else:
        code = INTERNAL_ERROR
    data: dict[str, Any] = dict(said)  # the JSON-RPC error's data, as the mcp SDK takes it
    return MCPError(code=code, message=said["error"], data=data)
