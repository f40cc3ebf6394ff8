"""LoCAL2's errors as MCP errors, with the HTTP API's words, in a form every client reads.

A tool that is refused (an unknown id, a question that cannot be asked, memory that is off)
answers a tool result marked ``isError`` whose text is the API's ``{error, fix}``
(:func:`local2.service._problems.problem`) with the status the API would answer, as JSON. It
carries no ``structuredContent``: the TypeScript SDK's v1 client, which most hosts embed,
checks structured content against the tool's output schema even on an error and would
replace the server's words with its own schema complaint; an error result without it is the
form the MCP specification's examples use and every client accepts. Arguments the tool's
schema refuses are said the same way, in the words of the API's 422 for the same mistake
(:func:`bad_arguments`). A resource or prompt that is refused raises an MCP error (JSON-RPC)
with the same words as its message and ``{error, fix, status}`` as its data.

Every refusal has a fix: where the error brings none, the MCP words for its kind
(:data:`FIXES`) say what to call instead.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar, cast

from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, CallToolResult, TextContent

from local2.errors import (
    AwaitingApproval,
    Conflict,
    InvalidInput,
    InvalidQuery,
    Local2Error,
    ModelError,
    NotFound,
    RunBusy,
    RunNotReady,
    SessionBusy,
    SettingsError,
    StorageFull,
    ToolError,
    Unavailable,
    UnknownDocument,
    UnknownLibraryEntry,
    UnknownRun,
    UnknownTurn,
)
from local2.mcp_server._shapes import Failure
from local2.service import invalid_fields, problem, status_of

logger = logging.getLogger(__name__)

# The MCP specification's code for an unknown resource up to 2025-11-25; from 2026-07-28
# it is INVALID_PARAMS (clients are asked to accept both).
RESOURCE_NOT_FOUND = -32002
MODERN_NOT_FOUND_FROM = "2026-07-28"
ARGUMENTS_FIX = "Send the arguments the tool's input schema allows (tools/list shows it)."
DOCTOR = "`local2 doctor` says what is missing"
# What to do about an error that names no fix itself, by its kind (the first of an error's
# classes found here): in the MCP tools' words.
FIXES: dict[type[Local2Error], str] = {
    UnknownRun: "Use a run id that research or list_research_runs returned (your own runs).",
    UnknownDocument: "Use a document id that list_documents returned (your own documents).",
    UnknownTurn: "Leave session_id out to start a new session, or use one ask returned.",
    UnknownLibraryEntry: "Search within library to find what your research runs read.",
    NotFound: "Use an id that one of the list tools returned (list_research_runs, list_documents).",
    InvalidQuery: "Send the question as text with words in it (and within its length limit).",
    InvalidInput: ARGUMENTS_FIX,
    SessionBusy: "Wait for the session's running turn to end, or leave session_id out to ask "
    "in a new session.",
    RunBusy: "Follow the run with research_status; call again once it has ended.",
    RunNotReady: "Check the run with research_status: research_input answers a paused run, "
    "research_result reads a finished one.",
    Conflict: "Wait for what is going on to end (research_status follows a run), then call again.",
    StorageFull: "Free space on the disk under LoCAL2's data directory, then call again.",
    Unavailable: f"Start the part that does not answer ({DOCTOR}), then call again.",
    ModelError: f"Check the chat model ({DOCTOR}: the model server and its models), then call "
    "again.",
    SettingsError: f"Fix the configuration ({DOCTOR}), then restart local2.",
    ToolError: "Call again with other arguments; the error says what the tool could not do.",
    Local2Error: f"Call again; if it fails again, {DOCTOR}.",
}
# Ids whose own fix names the HTTP API's routes: over MCP, the tools that list them.
IN_MCP_WORDS: tuple[type[Local2Error], ...] = (UnknownRun, UnknownDocument, UnknownLibraryEntry)
CRASHED = "The tool failed inside LoCAL2 (an internal error, written to the server's log)."
CRASHED_FIX = (
    f"Call again; if it fails again, see the server's log (local2 mcp's stderr) and {DOCTOR}."
)

P = ParamSpec("P")
R = TypeVar("R")


def fix_for(exc: Local2Error) -> str:
    """What to do about ``exc``: its own fix, else the one for its kind."""
    if isinstance(exc, AwaitingApproval):
        return (
            f"Approve or deny the waiting tool call in the app (session "
            f"{exc.request.get('session_id')}), or ask in a new session (no session_id)."
        )
    own = exc.fix
    if own and not isinstance(exc, IN_MCP_WORDS):
        return own
    return next(fix for kind, fix in FIXES.items() if isinstance(exc, kind))


def failure(exc: Local2Error) -> Failure:
    """``{error, fix, status}`` for ``exc``: what the API says and the status it answers."""
    said = problem(exc)
    error = str(said["error"]) or type(exc).__name__
    return {"error": error, "fix": fix_for(exc), "status": status_of(exc)}


def error_result(said: Failure) -> CallToolResult:
    """A tool result that says ``said``: in its text only (see the module's docstring)."""
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(said, ensure_ascii=False))],
        is_error=True,
    )


def failed_call(exc: Local2Error) -> CallToolResult:
    """A tool result that says ``exc`` as the API would."""
    return error_result(failure(exc))


def crashed() -> CallToolResult:
    """A tool that failed in a way no refusal covers: said as a 500, the details logged."""
    return error_result({"error": CRASHED, "fix": CRASHED_FIX, "status": 500})


def said_in(result: CallToolResult) -> Failure | None:
    """The ``{error, fix, status}`` an error result says (None: not one of ours)."""
    for block in result.content:
        if isinstance(block, TextContent):
            try:
                parsed = json.loads(block.text)
            except ValueError:
                return None
            if isinstance(parsed, dict) and "error" in parsed and "fix" in parsed:
                return cast(Failure, parsed)
    return None


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
    """``tool`` answering a :class:`~local2.errors.Local2Error` as :func:`failed_call`, and
    anything else it raises as :func:`crashed` with the traceback logged (the SDK passes a
    ``CallToolResult`` through as it is)."""

    @functools.wraps(tool)
    async def answering(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await tool(*args, **kwargs)
        except Local2Error as exc:
            return cast(R, failed_call(exc))
        except MCPError:
            raise
        except Exception:
            logger.exception("MCP tool %s failed", tool.__name__)
            return cast(R, crashed())

    return answering


def not_found_code(protocol_version: str | None) -> int:
    """The code for an unknown resource in the protocol version the session speaks."""
    modern = (protocol_version or "") >= MODERN_NOT_FOUND_FROM
    return INVALID_PARAMS if modern else RESOURCE_NOT_FOUND


def mcp_error(
    exc: Local2Error, protocol_version: str | None = None, code: int | None = None
) -> MCPError:
    """The JSON-RPC error for ``exc`` (resources, prompts): its message is the API's
    ``error``, its data ``{error, fix, status}``; ``code`` when the specification names one
    for the method (an unknown prompt: -32602)."""
    said = failure(exc)
    if code is None and isinstance(exc, NotFound):
        code = not_found_code(protocol_version)
    elif code is None:
        code = INVALID_PARAMS if isinstance(exc, InvalidInput) else INTERNAL_ERROR
    data: dict[str, Any] = dict(said)  # the JSON-RPC error's data, as the mcp SDK takes it
    return MCPError(code=code, message=said["error"], data=data)
