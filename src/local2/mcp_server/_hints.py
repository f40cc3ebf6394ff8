"""What each LoCAL2 tool tells an MCP client it does (the spec's tool annotations), one
definition a kind: a client may ask before a call that is not a read."""

from __future__ import annotations

from mcp_types import ToolAnnotations

# Reads the caller's own things: nothing changes, nothing outside is asked.
READS = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)
# Adds to the caller's own things (a memory, a watch): each call adds another.
ADDS = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
# Works on the caller's question with the model and the web (a turn, a research run).
WORKS = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=True
)
