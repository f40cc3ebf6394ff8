"""``local2 mcp --print-config``: what to paste into an MCP host to reach LoCAL2.

For each host, its own file's shape: Claude Desktop (``claude_desktop_config.json``, stdio
only), Claude Code (``.mcp.json``), Cursor (``.cursor/mcp.json``) and VS Code
(``.vscode/mcp.json``, ``servers`` rather than ``mcpServers``). The stdio entry starts
``local2 mcp`` by its absolute path, with an ``env`` block: a host starts a stdio server
with a minimal environment, so without it ``local2 mcp`` would use ``~/.local2`` and the
demo model instead of the person's ``LOCAL2_HOME``, ``LOCAL2_CONFIG`` and ``OLLAMA_HOST``.
The HTTP entry reaches ``/mcp`` on ``local2 serve`` with the person's bearer token, as each
host spells a secret taken from elsewhere (never the token itself unless ``--token`` gives
it).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

DEFAULT_URL = "http://127.0.0.1:7860/mcp"
Host = Literal["claude-desktop", "claude-code", "cursor", "vscode"]
HOSTS: tuple[Host, ...] = ("claude-desktop", "claude-code", "cursor", "vscode")
# How each host spells "the token from the person's environment (or a prompt)".
TOKEN_REFERENCE: dict[Host, str] = {
    "claude-desktop": "",  # remote servers are added as connectors in its settings
    "claude-code": "${LOCAL2_TOKEN}",
    "cursor": "${env:LOCAL2_TOKEN}",
    "vscode": "${input:local2-token}",
}
WHERE: dict[Host, str] = {
    "claude-desktop": "Claude Desktop (claude_desktop_config.json)",
    "claude-code": "Claude Code (.mcp.json, or `claude mcp add-json local2 '<entry>'`)",
    "cursor": "Cursor (~/.cursor/mcp.json or .cursor/mcp.json)",
    "vscode": "VS Code (.vscode/mcp.json, or your profile's mcp.json)",
}
Json = dict[str, Any]  # a host's configuration file, as the JSON it reads


@dataclass(frozen=True)
class Reach:
    """How a host reaches LoCAL2: the program and its options (stdio), what it must find in
    its environment, and the ``/mcp`` address with the token (HTTP)."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    url: str = DEFAULT_URL
    token: str | None = None


def local2_command() -> str:
    """The ``local2`` program to start, as an absolute path: the one installed with this
    Python (the install printing the block), else the one on PATH."""
    beside = Path(sys.executable).absolute().with_name("local2")
    if beside.is_file():
        return str(beside)
    found = shutil.which("local2")
    return str(Path(found).absolute()) if found else str(beside)


def stdio_entry(reach: Reach, host: Host) -> Json:
    entry: Json = {"command": reach.command, "args": list(reach.args)}
    if reach.env:
        entry["env"] = dict(reach.env)
    return {"type": "stdio", **entry} if host in ("claude-code", "vscode") else entry


def http_entry(reach: Reach, host: Host) -> Json:
    token = reach.token or TOKEN_REFERENCE[host]
    entry: Json = {"url": reach.url, "headers": {"Authorization": f"Bearer {token}"}}
    return {"type": "http", **entry} if host in ("claude-code", "vscode") else entry


def host_block(reach: Reach, host: Host) -> Json:
    """The host's file: LoCAL2 over stdio (``local2``), and on ``local2 serve``
    (``local2-http``) where the host's file takes a remote server."""
    servers: Json = {"local2": stdio_entry(reach, host)}
    if host != "claude-desktop":
        servers["local2-http"] = http_entry(reach, host)
    if host != "vscode":
        return {"mcpServers": servers}
    block: Json = {"servers": servers}
    if reach.token is None:
        prompt = "LoCAL2 bearer token (local2 users add NAME prints one)"
        block["inputs"] = [
            {"type": "promptString", "id": "local2-token", "description": prompt, "password": True}
        ]
    return block


def client_config(reach: Reach, hosts: tuple[Host, ...] = HOSTS) -> str:
    """Each host's block under a line saying where it goes."""
    shown = [f"# {WHERE[h]}\n{json.dumps(host_block(reach, h), indent=2)}\n" for h in hosts]
    return "\n".join(shown)
