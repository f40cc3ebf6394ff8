"""``local2 mcp --print-config``: what to paste into an MCP client to reach LoCAL2.

Two blocks: one for a desktop client that starts ``local2 mcp`` itself over stdio (Claude
Desktop's ``claude_desktop_config.json``; Cursor and VS Code take the same shape), and one
for a client of a LoCAL2 server over streamable HTTP, with the person's bearer token (Claude
Code's ``.mcp.json``; ``${LOCAL2_TOKEN}`` is expanded from the environment there).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

TOKEN_PLACEHOLDER = "${LOCAL2_TOKEN}"
DEFAULT_URL = "http://127.0.0.1:7860/mcp"


def local2_command() -> str:
    """The ``local2`` program to start: the one on PATH, else beside this Python."""
    found = shutil.which("local2")
    if found:
        return str(Path(found).resolve())
    beside = Path(sys.executable).with_name("local2")
    return str(beside)


def stdio_block(
    command: str | None = None, config_dir: str | None = None, as_name: str | None = None
) -> dict[str, Any]:  # an MCP client's config file, in the JSON it reads
    """Claude Desktop's block: the client starts ``local2 [--config DIR] [--as NAME] mcp``."""
    args = [*(["--config", config_dir] if config_dir else [])]
    args += [*(["--as", as_name] if as_name else []), "mcp"]
    return {"mcpServers": {"local2": {"command": command or local2_command(), "args": args}}}


# an MCP client's config file, in the JSON it reads
def http_block(url: str = DEFAULT_URL, token: str | None = None) -> dict[str, Any]:
    """A streamable-HTTP client's block: the server's ``/mcp`` and the person's token."""
    server: dict[str, Any] = {"type": "http", "url": url}  # the client's server entry (JSON)
    server["headers"] = {"Authorization": f"Bearer {token or TOKEN_PLACEHOLDER}"}
    return {"mcpServers": {"local2": server}}


def client_config(
    url: str = DEFAULT_URL,
    token: str | None = None,
    config_dir: str | None = None,
    as_name: str | None = None,
    command: str | None = None,
) -> str:
    """Both blocks, each under a line saying where it goes."""
    stdio = json.dumps(stdio_block(command, config_dir, as_name), indent=2)
    http = json.dumps(http_block(url, token), indent=2)
    return (
        "# Claude Desktop (claude_desktop_config.json): LoCAL2 over stdio\n"
        f"{stdio}\n\n"
        "# A streamable-HTTP client (e.g. Claude Code's .mcp.json): LoCAL2 on local2 serve\n"
        f"{http}\n"
    )
