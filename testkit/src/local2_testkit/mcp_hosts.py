"""The MCP clients that hosts are built on, as the dev setup installed them
(``scripts/setup.sh --dev``, into ``testkit/mcp-clients/``; never fetched at test time):

- the TypeScript SDK's client (``@modelcontextprotocol/sdk``, pinned in its
  ``package-lock.json``), driven by ``ts_client.mjs`` under Debian's Node;
- ``langchain-mcp-adapters`` in a venv of its own (``langchain.txt``: it requires mcp<2).

Each runs as a process given a plan (JSON) and prints what it got (JSON).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

CLIENTS = Path(__file__).resolve().parents[2] / "mcp-clients"
TS_SDK = CLIENTS / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
LANGCHAIN_PYTHON = CLIENTS / ".venv" / "bin" / "python"
SETUP = "run scripts/setup.sh --dev (it installs the MCP clients the tests use)"


class ClientMissing(RuntimeError):
    """A client the dev setup installs is not there."""


def node() -> str:
    found = shutil.which("node")
    if found is None or not TS_SDK.is_file():
        raise ClientMissing(f"Node or the TypeScript MCP SDK is missing: {SETUP}")
    return found


def ts_sdk_version() -> str:
    return str(json.loads(TS_SDK.read_text())["version"])


# plan and answer: the client drivers' JSON (see ts_client.mjs, langchain_client.py)
def run_plan(command: list[str], plan: dict[str, Any], timeout: float) -> dict[str, Any]:
    shown = subprocess.run(
        [*command, json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=CLIENTS,
        check=False,
    )
    if shown.returncode != 0 or not shown.stdout.strip():
        raise AssertionError(f"{command[-1]} failed ({shown.returncode}): {shown.stderr[-2000:]}")
    found: dict[str, Any] = json.loads(  # the driver's answer (JSON)
        shown.stdout.strip().splitlines()[-1]
    )
    found["stderr"] = shown.stderr
    return found


# a plan for ts_client.mjs and its answer, as JSON
def ts_client(plan: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
    """The TypeScript SDK's client run through ``plan`` (see ``ts_client.mjs``)."""
    return run_plan([node(), str(CLIENTS / "ts_client.mjs")], plan, timeout)


# a plan for langchain_client.py and its answer, as JSON
def langchain_client(plan: dict[str, Any], timeout: float = 600) -> dict[str, Any]:
    """langchain-mcp-adapters run through ``plan`` (see ``langchain_client.py``)."""
    if not LANGCHAIN_PYTHON.is_file():
        raise ClientMissing(f"langchain-mcp-adapters' venv is missing: {SETUP}")
    return run_plan([str(LANGCHAIN_PYTHON), str(CLIENTS / "langchain_client.py")], plan, timeout)
