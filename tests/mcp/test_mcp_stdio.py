"""``local2 mcp`` over stdio, started by the MCP SDK's stdio client as a desktop client starts
it (the model behind the Ollama-protocol test server, search and pages on a loopback web),
a research call cancelled in a session that goes on;
``--print-config``; and a second, independent MCP client (FastMCP's) loading LoCAL2's
tools from ``/mcp`` on ``local2 serve``'s app, calling one, and handing them to a LangGraph
agent (langchain-mcp-adapters would be the usual bridge, but it still requires mcp<2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp_types import TextResourceContents

from local2.config import load_settings
from local2.storage import list_calls
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides
from local2_testkit.serve_process import ServeProcess
from tests.kit.browser import app_served
from tests.kit.mcp_clients import http_session, stdio_session, structured, write_config
from tests.mcp.helpers import CORPUS, QUESTION, mcp_agent


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("mcp-stdio")
    with FakeOllama(ResearchBrain()) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        overrides = research_overrides(web, base / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["generator"] = {"backend": "ollama"}
        overrides["memory"] = {"embedder": "lexical"}
        yield {"config": write_config(base / "config", overrides), "fake": fake, "web": web}


def test_stdio_lists_tools_asks_and_researches_with_progress(stack: dict[str, Any]) -> None:
    notes: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        notes.append(message or "")

    async def used() -> dict[str, Any]:
        async with stdio_session(stack["config"]) as session:
            tools = {t.name for t in (await session.list_tools()).tools}
            asked = structured(await session.call_tool("ask", {"question": "Where is Kelsby?"}))
            args = {"question": QUESTION, "max_rounds": 1, "clarify": "never"}
            done = structured(
                await session.call_tool("research", args, progress_callback=on_progress)
            )
            report = await session.read_resource(done["resource"])
            runs = structured(await session.call_tool("list_research_runs", {}))
            stopped = await cancelled_run(session, stack["fake"])
            return {
                "tools": tools,
                "asked": asked,
                "done": done,
                "report": report,
                "runs": runs,
                "stopped": stopped,
            }

    got = anyio.run(used)
    stopped = got["stopped"]
    assert stopped["status"] == "stopped" and stopped["stopped"] == "the person stopped the run"
    assert stopped["report"] and stopped["run_id"] != got["done"]["run_id"]
    calls = list_calls(load_settings(stack["config"]))  # each call, its caller and transport
    assert {(c["person"], c["transport"]) for c in calls} == {("local", "stdio")}
    research = [(c["outcome"], c.get("ids")) for c in calls if c["name"] == "research"]
    assert ("answered", {"run_id": got["done"]["run_id"]}) in research
    assert ("cancelled", None) in research  # the call the client cancelled
    assert ("resources/read", got["done"]["resource"]) in {(c["method"], c["name"]) for c in calls}
    assert {"ask", "research", "research_input", "search", "remember"} <= got["tools"]
    assert got["asked"]["answer"] and got["asked"]["session_id"]
    assert got["done"]["status"] == "done" and got["done"]["sources"]
    assert notes[0].startswith(f"run {got['done']['run_id']} started")
    assert any(n.startswith("step ") for n in notes)
    contents = got["report"].contents[0]
    assert isinstance(contents, TextResourceContents) and contents.text == got["done"]["report"]
    assert [r["run_id"] for r in got["runs"]["runs"]] == [got["done"]["run_id"]]


async def cancelled_run(session: ClientSession, fake: FakeOllama) -> dict[str, Any]:
    """A research call the client cancels (``notifications/cancelled``) at its first step;
    the same session then follows the run to its end."""
    run_ids: list[str] = []
    fake.delay_s = 0.3  # each reply: the run still goes when the call is cancelled
    try:
        with anyio.CancelScope() as call:

            async def on_progress(done: float, total: float | None, note: str | None) -> None:
                if note and note.startswith("run "):
                    run_ids.append(note.split()[1])
                if note and note.startswith("step "):
                    call.cancel()

            args = {"question": QUESTION, "max_rounds": 2, "clarify": "never"}
            with anyio.fail_after(120):
                await session.call_tool("research", args, progress_callback=on_progress)
        status = "running"
        with anyio.fail_after(120):
            while status in ("running", "unfinished"):
                await anyio.sleep(0.1)
                shown = await session.call_tool("research_status", {"run_id": run_ids[0]})
                status = structured(shown)["status"]
    finally:
        fake.delay_s = 0.0
    return structured(await session.call_tool("research_result", {"run_id": run_ids[0]}))


def test_stdio_answers_a_plan_review_through_research_input(stack: dict[str, Any]) -> None:
    async def reviewed() -> tuple[dict[str, Any], dict[str, Any]]:
        async with stdio_session(stack["config"]) as session:
            args = {"question": QUESTION, "max_rounds": 1, "review": True}
            paused = structured(await session.call_tool("research", args))
            answer = {"run_id": paused["run_id"], "approve": True}
            return paused, structured(await session.call_tool("research_input", answer))

    paused, rest = anyio.run(reviewed)
    assert paused["status"] == "awaiting_input" and paused["awaiting"]["waits_for"] == "plan"
    assert rest["status"] == "done" and rest["report"]


def test_local2_serve_serves_mcp_at_its_path(stack: dict[str, Any]) -> None:
    """The real ``local2 serve --no-ui`` process: ``/mcp`` beside the API, its sessions run
    by the app's lifespan."""

    async def listed(url: str) -> tuple[set[str], dict[str, Any]]:
        async with http_session(f"{url}/mcp") as session:
            tools = {t.name for t in (await session.list_tools()).tools}
            runs = structured(await session.call_tool("list_research_runs", {}))
            return tools, runs

    with ServeProcess(stack["config"]) as served:
        tools, runs = anyio.run(listed, served.url)
    assert "research" in tools and isinstance(runs["runs"], list)


def test_print_config_gives_each_hosts_block_with_the_persons_environment(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "local2.cli", "--config", str(tmp_path)]
    command += ["mcp", "--print-config", "--url", "http://team.example:7860/mcp"]
    env = {**os.environ, "LOCAL2_HOME": str(tmp_path / "home"), "OLLAMA_HOST": "gpu:11434"}
    shown = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    blocks = {}
    for part in shown.stdout.split("\n# ")[0:]:
        where, _, body = part.lstrip("# ").partition("\n")
        blocks[where.split(" (")[0]] = json.loads(body)
    assert set(blocks) == {"Claude Desktop", "Claude Code", "Cursor", "VS Code"}
    person = {"LOCAL2_HOME": str(tmp_path / "home"), "LOCAL2_CONFIG": str(tmp_path.resolve())}
    person["OLLAMA_HOST"] = "http://gpu:11434"
    for where, block in blocks.items():
        servers = block["servers"] if where == "VS Code" else block["mcpServers"]
        stdio = servers["local2"]
        assert Path(stdio["command"]).is_absolute() and Path(stdio["command"]).name == "local2"
        assert stdio["args"] == ["mcp"] and stdio["env"] == person, where
        if where == "Claude Desktop":
            assert set(servers) == {"local2"}  # its remote servers are connectors
            continue
        http = servers["local2-http"]
        assert http["url"] == "http://team.example:7860/mcp", where
        assert (stdio.get("type"), http.get("type")) == (
            ("stdio", "http") if where in ("Claude Code", "VS Code") else (None, None)
        )
    token = {
        w: blocks[w]["mcpServers"]["local2-http"]["headers"] for w in ("Claude Code", "Cursor")
    }
    assert token == {
        "Claude Code": {"Authorization": "Bearer ${LOCAL2_TOKEN}"},
        "Cursor": {"Authorization": "Bearer ${env:LOCAL2_TOKEN}"},
    }
    vscode = blocks["VS Code"]
    assert vscode["servers"]["local2-http"]["headers"]["Authorization"] == (
        "Bearer ${input:local2-token}"
    )
    assert vscode["inputs"][0]["id"] == "local2-token" and vscode["inputs"][0]["password"]


def langgraph_agent(client: Any, tools: list[Any], model: Any) -> Any:
    """A LangGraph agent whose tools are LoCAL2's MCP tools, called through ``client``."""
    from langchain_core.tools import StructuredTool
    from langgraph.prebuilt import create_react_agent

    def as_tool(tool: Any) -> StructuredTool:
        async def call(**args: Any) -> str:
            result = await client.call_tool(tool.name, args)
            return json.dumps(result.structured_content)

        return StructuredTool(
            name=tool.name,
            description=tool.description or tool.name,
            args_schema=tool.input_schema,
            coroutine=call,
        )

    return create_react_agent(model, [as_tool(t) for t in tools])


def test_a_second_independent_client_loads_and_calls_the_tools(
    tmp_path: Path, stack: dict[str, Any]
) -> None:
    """FastMCP's client (its own transport and session code over the SDK's types): the same
    tools, schemas and a call, from ``/mcp`` on the app with the web app mounted too; and
    the tools it loaded given to a LangGraph agent, whose model calls ``search``."""
    import fastmcp  # a dev dependency
    from fastmcp.client.transports import StreamableHttpTransport

    from local2.contracts._people import LOCAL
    from local2.models._scripted import ScriptedChatModel, reply

    agent = mcp_agent(stack["fake"], stack["web"], tmp_path / "data")
    text = "Kelsby bridge ledger\n\fThe toll of the Kelsby bridge paid for its repairs."
    agent.documents.add(LOCAL, "ledger.txt", text.encode())

    def answer(messages: list[Any]) -> Any:
        found = json.loads(messages[-1].content)["hits"][0]
        return reply(f"{found['passage']} ({found['path']}, page {found['page']})")

    search = {"query": "Kelsby bridge toll", "within": ["documents"], "k": 2}
    model = ScriptedChatModel(replies=[reply(tool_calls=[{"name": "search", "args": search}])])
    model.replies.append(answer)

    async def loaded(url: str) -> tuple[list[Any], Any, Any]:
        async with fastmcp.Client(StreamableHttpTransport(url)) as client:
            tools = await client.list_tools()
            result = await client.call_tool("ask", {"question": "Where is Kelsby?"})
            graph = langgraph_agent(client, tools, model)
            said = await graph.ainvoke({"messages": [("user", "What paid for the bridge?")]})
            return tools, result, said

    try:
        with app_served(agent, ui=True) as url:
            tools, result, said = anyio.run(loaded, f"{url}/mcp")
        answered = result.structured_content
        assert agent.access.session_owner(answered["session_id"]) == "local"
    finally:
        agent.close()
    by_name = {t.name: t for t in tools}
    assert {"ask", "research", "search", "read_document", "remember"} <= set(by_name)
    assert by_name["remember"].annotations.read_only_hint is False
    assert by_name["search"].annotations.read_only_hint is True
    assert answered["answer"] and answered["session_id"]
    final = said["messages"][-1].content
    assert final.startswith("The toll of the Kelsby bridge") and "page 2" in final
