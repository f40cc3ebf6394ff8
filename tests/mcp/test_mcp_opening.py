"""``local2 mcp`` answers before its agent has opened (local2.mcp_server._opening): the
listings need nothing of it, a call waits for it, and an agent that cannot open (here: the
configured model is not pulled in the Ollama-protocol test server) is every call's refusal,
in the words the command prints on stderr, while the listings go on answering. Started by
the SDK's stdio client, as a host starts it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from local2_testkit.ollama_server import FakeOllama
from tests.kit.mcp_clients import stdio_session, structured, write_config

MISSING = "not-pulled:7b"


def test_an_agent_that_cannot_open_is_each_calls_refusal(tmp_path: Path) -> None:
    with FakeOllama() as ollama:
        config = write_config(
            tmp_path / "config",
            {
                "system": {"data_dir": str(tmp_path / "data"), "ollama_host": ollama.url},
                "generator": {"backend": "ollama", "model": MISSING},
            },
        )
        with (tmp_path / "stderr.txt").open("w+") as stderr:
            got = refused_calls(config, stderr)
            stderr.seek(0)
            printed = stderr.read()
    for result in (got["searched"], got["asked"]):
        said = structured(result)
        assert result.is_error and result.structured_content is None
        assert MISSING in said["error"] and "ollama pull" in said["fix"], said
    read = got["read"].error
    assert MISSING in read.message and "ollama pull" in read.data["fix"]
    assert len(got["tools"]) == len(got["again"]) >= 10 and got["templates"]
    assert printed.count("Error: ") == 1 and MISSING in printed, printed
    assert "Traceback" not in printed, printed


def refused_calls(config: Path, stderr: TextIO) -> dict[str, Any]:
    """Listings, two calls and a read, and the listing again, in one session."""

    async def used() -> dict[str, Any]:
        async with stdio_session(config, errlog=stderr) as session:
            tools = (await session.list_tools()).tools
            templates = (await session.list_resource_templates()).resource_templates
            searched = await session.call_tool("search", {"query": "Kelsby"})
            asked = await session.call_tool("ask", {"question": "Where is Kelsby?"})
            with pytest.raises(MCPError) as read:
                await session.read_resource("local2://research/abc123")
            listed_again = (await session.list_tools()).tools
            return {
                "tools": tools,
                "templates": templates,
                "searched": searched,
                "asked": asked,
                "read": read.value,
                "again": listed_again,
            }

    found: dict[str, Any] = anyio.run(used)
    return found


def test_what_the_stdio_server_imports_before_it_answers_is_not_the_agents() -> None:
    """The command and the stdio server's modules, imported in a fresh interpreter, bring
    none of what opening the agent or serving HTTP needs (about 2.7 s of imports, which
    ``bench/mcp_start.py``'s tools/list answer does not wait for)."""
    heavy = {"langgraph", "langchain_core", "langsmith", "chromadb", "fastapi", "gradio"}
    heavy |= {"bm25s", "numpy", "onnxruntime"}
    probe = (
        "import sys, local2.cli._main, local2.mcp_server._server;"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {heavy!r}))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert shown.stdout.strip() == "[]", shown.stdout
