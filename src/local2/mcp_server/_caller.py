"""Who an MCP call is for.

Over stdio it is the person the command runs for (``local2 [--as NAME] mcp``). Over HTTP
(``/mcp`` on ``local2 serve``) it is the person the request signed in as
(:class:`local2.mcp_server._over_http.PersonGate` puts them in :data:`CALLER`, which the SDK
carries to the tool's handler).
"""

from __future__ import annotations

from contextvars import ContextVar

from local2.contracts import Person

CALLER: ContextVar[Person | None] = ContextVar("local2_mcp_caller", default=None)


def caller(default: Person | None = None) -> Person:
    """The person this call is for: the request's (HTTP), else ``default`` (stdio)."""
    person = CALLER.get() or default
    if person is None:
        # a server built for HTTP reached without its gate: a bug, never local's by default
        raise RuntimeError("no one is signed in for this MCP call")
    return person
