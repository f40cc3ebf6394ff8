"""MCP tools against the real example server, as a subprocess over stdio and over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.config import Settings, load_settings
from local2.config._schema import McpServer
from local2.errors import ToolError
from local2.ports import free_port
from local2.tools._base import Tool, ToolContext
from local2.tools._mcp import (
    MAX_NAME,
    McpServerStatus,
    load_mcp_tools,
    redact,
    safe_url,
    shutdown_mcp,
    tool_name,
)

SERVER = str(Path(__file__).resolve().parents[2] / "examples" / "mcp_units_server.py")
CTX = ToolContext(session_id="s1", query_id="q1")
SECRET = "s3cret-value-1234"


def start_http_server(port: int) -> subprocess.Popen[bytes]:
    """The example server on streamable HTTP; returns once it accepts connections."""
    proc = subprocess.Popen(
        [sys.executable, SERVER, "--http", "--port", str(port), "--test-tools"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"MCP HTTP server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            time.sleep(0.2)
    stop(proc)
    raise RuntimeError("MCP HTTP server did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.is_file() and "zombie" in status.read_text())


def stdio(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "command": sys.executable, "args": [SERVER, "--test-tools"], **extra}


def settings_with(data_dir: Path, servers: list[dict[str, Any]]) -> Settings:
    return load_settings(
        overrides={"system": {"data_dir": str(data_dir)}, "mcp": {"servers": servers}}
    )


def by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    proc = start_http_server(port)
    yield f"http://127.0.0.1:{port}/mcp"
    stop(proc)


@pytest.fixture(scope="module")
def loaded(
    http_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[dict[str, Tool], dict[str, McpServerStatus], float]]:
    """One start-up with a good stdio server, a good HTTP server and two broken ones."""
    settings = settings_with(
        tmp_path_factory.mktemp("mcp"),
        [
            stdio(
                "units",
                env={"LOCAL2_TEST_SECRET": SECRET, "LOCAL2_FROM_ENV": "${LOCAL2_MCP_TEST_KEY}"},
                deny=["crash", "pid"],
                timeout_s=10,
            ),
            # 5 s: the HTTP server is a Python process of its own, slow to answer on a
            # loaded machine; 2 s lost its discovery or first call under the full suite
            {"name": "web", "url": http_url, "allow": ["add", "sleep_forever"], "timeout_s": 5},
            {"name": "broken", "command": "/nonexistent/local2-mcp", "env": {"K": SECRET}},
            {"name": "refused", "url": f"http://127.0.0.1:{free_port()}/mcp", "timeout_s": 5},
        ],
    )
    os.environ["LOCAL2_MCP_TEST_KEY"] = "k-from-env"
    try:
        started = time.monotonic()
        tools, statuses = load_mcp_tools(settings)
        elapsed = time.monotonic() - started
    finally:
        del os.environ["LOCAL2_MCP_TEST_KEY"]
    yield by_name(tools), {s.name: s for s in statuses}, elapsed
    shutdown_mcp(tools)


# ------------------------------------------------------------------- discovery


def test_discovery_over_stdio_and_http_with_schemas(loaded) -> None:
    tools, statuses, _ = loaded
    assert statuses["units"].ok and statuses["units"].error is None
    assert set(statuses["units"].tools) == {
        "units__convert_units",
        "units__add",
        "units__fail",
        "units__sleep_forever",
        "units__echo_env",
    }
    assert statuses["web"].ok
    assert sorted(statuses["web"].tools) == ["web__add", "web__sleep_forever"]
    assert set(tools) == set(statuses["units"].tools) | set(statuses["web"].tools)

    convert = tools["units__convert_units"]
    assert "Convert a quantity between units" in convert.description
    params = convert.parameters
    assert params["type"] == "object"
    assert set(params["required"]) == {"value", "from_unit", "to_unit"}
    assert params["properties"]["value"]["type"] == "number"
    assert params["properties"]["to_unit"]["type"] == "string"
    schema = convert.schema()
    assert schema["function"]["name"] == "units__convert_units"
    assert tools["web__add"].parameters["properties"]["b"]["type"] == "number"


def test_allow_and_deny_filter_what_is_offered(loaded) -> None:
    tools, _, _ = loaded
    # deny on the stdio server, allow on the HTTP one (same server program, same tools)
    assert "units__crash" not in tools and "units__pid" not in tools
    assert "web__convert_units" not in tools and "web__crash" not in tools
    assert "units__convert_units" in tools and "web__add" in tools


def test_tools_are_side_effecting_unless_the_server_marks_them_read_only(loaded) -> None:
    tools, _, _ = loaded
    assert tools["units__convert_units"].effects == "read"  # readOnlyHint
    assert tools["web__add"].effects == "read"
    assert tools["units__fail"].effects == "write"  # no hint: assume it changes things
    assert {t.output for t in tools.values()} == {"untrusted"}


def test_broken_servers_are_reported_not_fatal(loaded) -> None:
    tools, statuses, elapsed = loaded
    broken, refused = statuses["broken"], statuses["refused"]
    assert not broken.ok and broken.tools == []
    assert "mcp server broken failed" in (broken.error or "")
    assert "No such file" in (broken.error or "")
    assert not refused.ok and "mcp server refused failed" in (refused.error or "")
    assert not any(name.startswith(("broken__", "refused__")) for name in tools)
    assert elapsed < 30, f"discovery took {elapsed:.1f}s"


def test_a_server_that_never_answers_start_up_is_bounded(tmp_path: Path) -> None:
    pid_file = tmp_path / "silent.pid"
    script = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)"
    silent = {
        "name": "silent",
        "command": sys.executable,
        "args": ["-c", script, str(pid_file)],
        "timeout_s": 1.5,
    }
    started = time.monotonic()
    tools, statuses = load_mcp_tools(settings_with(tmp_path, [silent]))
    elapsed = time.monotonic() - started
    assert tools == []
    assert statuses == [McpServerStatus("silent", False, [], "timeout after 1.5s")]
    assert elapsed < 8, f"start-up took {elapsed:.1f}s"
    # the silent process is not left behind
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and process_alive(pid):
        time.sleep(0.2)
    assert not process_alive(pid)


# ------------------------------------------------------------------- calls


def test_call_over_stdio_returns_text(loaded) -> None:
    tools, _, _ = loaded
    out = tools["units__convert_units"].run({"value": 5, "from_unit": "km", "to_unit": "mi"}, CTX)
    assert out == "5 km = 3.10686 mi"
    assert tools["units__add"].run({"a": 2.5, "b": 4}, CTX) == "6.5"


def test_call_over_http_returns_text(loaded) -> None:
    tools, _, _ = loaded
    assert tools["web__add"].run({"a": 40, "b": 2}, CTX) == "42"


def test_tool_error_becomes_tool_error(loaded) -> None:
    tools, _, _ = loaded
    with pytest.raises(ToolError, match=r"cannot convert length \(km\) to mass \(kg\)"):
        tools["units__convert_units"].run({"value": 1, "from_unit": "km", "to_unit": "kg"}, CTX)
    with pytest.raises(ToolError, match="boom"):
        tools["units__fail"].run({"message": "boom"}, CTX)
    # the session survives tool-level errors
    assert tools["units__add"].run({"a": 1, "b": 1}, CTX) == "2"


def test_env_reaches_the_server_but_never_the_messages(loaded) -> None:
    tools, statuses, _ = loaded
    secret_len = f"set ({len(SECRET)} chars)"
    assert tools["units__echo_env"].run({"name": "LOCAL2_TEST_SECRET"}, CTX) == secret_len
    assert tools["units__echo_env"].run({"name": "LOCAL2_NOT_SET_X"}, CTX) == "unset"
    assert (
        tools["units__echo_env"].run({"name": "LOCAL2_FROM_ENV"}, CTX) == "set (10 chars)"
    )  # ${NAME}
    assert all(SECRET not in (s.error or "") for s in statuses.values())
    server = McpServer(name="x", url=f"https://user:{SECRET}@h.example/mcp?key={SECRET}")
    assert SECRET not in redact(f"failed to reach {server.url}: {SECRET}", server)
    assert safe_url(server.url or "") == "https://h.example/mcp"


def test_http_hang_is_bounded_and_the_server_keeps_serving(loaded) -> None:
    tools, _, _ = loaded
    hang = tools["web__sleep_forever"]
    assert hang.timeout_s is not None and hang.timeout_s > 5  # the graph's backstop comes later
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"^timeout after 5s$"):
        hang.run({}, CTX)
    assert time.monotonic() - started < 10
    assert tools["web__add"].run({"a": 1, "b": 2}, CTX) == "3"


def test_stdio_hang_is_bounded_and_the_server_is_restarted(tmp_path: Path) -> None:
    # 5 s: the restarted server (a new Python process with the MCP SDK) must start within
    # the same per-call timeout, which takes seconds when the shared machine is busy.
    tools, _ = load_mcp_tools(settings_with(tmp_path, [stdio("u", timeout_s=5)]))
    try:
        named = by_name(tools)
        first = named["u__pid"].run({}, CTX)
        started = time.monotonic()
        with pytest.raises(ToolError, match=r"^timeout after 5s$"):
            named["u__sleep_forever"].run({}, CTX)
        assert time.monotonic() - started < 10
        # the wedged session was dropped: a new process answers
        assert named["u__add"].run({"a": 1, "b": 2}, CTX) == "3"
        assert named["u__pid"].run({}, CTX) != first
    finally:
        shutdown_mcp(tools)


def test_stdio_crash_mid_call_is_reported_then_recovered(tmp_path: Path) -> None:
    tools, _ = load_mcp_tools(settings_with(tmp_path, [stdio("calc", timeout_s=10)]))
    second = "0"
    try:
        named = by_name(tools)
        first = named["calc__pid"].run({}, CTX)
        started = time.monotonic()
        with pytest.raises(ToolError, match=r"^mcp server calc failed: "):
            named["calc__crash"].run({}, CTX)
        assert time.monotonic() - started < 10
        second = named["calc__pid"].run({}, CTX)
        assert second.isdigit() and second != first
        assert named["calc__add"].run({"a": 2, "b": 2}, CTX) == "4"
    finally:
        shutdown_mcp(tools)
    assert not process_alive(int(second))  # closing the session stopped the server
    assert (tmp_path / "mcp" / "calc.log").is_file()  # the server's stderr went to its log


def test_http_server_gone_is_reported_then_recovered(tmp_path: Path) -> None:
    port = free_port()
    proc = start_http_server(port)
    url = f"http://127.0.0.1:{port}/mcp"
    tools: list[Tool] = []
    try:
        tools, statuses = load_mcp_tools(
            settings_with(tmp_path, [{"name": "remote", "url": url, "timeout_s": 3}])
        )
        assert statuses[0].ok
        named = by_name(tools)
        with pytest.raises(ToolError, match=r"^(mcp server remote failed: |timeout after 3s)"):
            named["remote__crash"].run({}, CTX)  # the server process dies mid-call
        proc.wait(timeout=10)
        with pytest.raises(ToolError, match=r"^mcp server remote failed: "):
            named["remote__add"].run({"a": 1, "b": 1}, CTX)
        proc = start_http_server(port)
        assert named["remote__add"].run({"a": 1, "b": 1}, CTX) == "2"
    finally:
        shutdown_mcp(tools)
        stop(proc)


# ------------------------------------------------------------------- names


def test_tool_names_fit_function_name_rules() -> None:
    assert tool_name("units", "convert_units") == "units__convert_units"
    assert tool_name("my.server", "get/item v2") == "my_server__get_item_v2"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == MAX_NAME
    assert long != tool_name("s" * 40, "t" * 39 + "u")  # a digest keeps truncated names apart
    import re

    for name in (long, tool_name("ünï", "cödé")):
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name)


def test_no_servers_means_no_tools(tmp_path: Path) -> None:
    assert load_mcp_tools(settings_with(tmp_path, [])) == ([], [])


def test_duplicate_server_names_are_reported(tmp_path: Path) -> None:
    settings = settings_with(
        tmp_path,
        [
            {"name": "d", "command": "/nonexistent/a"},
            {"name": "d", "command": "/nonexistent/b"},
        ],
    )
    _, statuses = load_mcp_tools(settings)
    assert [s.name for s in statuses] == ["d", "d"]
    assert "duplicate server name" in (statuses[1].error or "")


# ------------------------------------------------------------------- a whole turn


def test_mcp_tool_through_a_whole_turn(tmp_path: Path) -> None:
    graph_mod = pytest.importorskip("local2.service.wiring")
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from local2.models._scripted import ScriptedChatModel, reply

    settings = load_settings(
        overrides={
            "system": {"data_dir": str(tmp_path), "checkpointer": "memory"},
            "memory": {"enabled": False},
            "critic": {"enabled": False},
            "mcp": {"servers": [stdio("units", deny=["crash", "sleep_forever"])]},
        }
    )
    tools, statuses = load_mcp_tools(settings)
    assert statuses[0].ok

    def answer_from_tool(messages: list[BaseMessage]) -> AIMessage:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        text = str(results[-1].content) if results else "no tool result"
        return AIMessage(content=f"It is {text.split(' = ')[-1].split(chr(10))[0].strip()}.")

    call = {
        "name": "units__convert_units",
        "args": {"value": 5, "from_unit": "km", "to_unit": "mi"},
    }
    model = ScriptedChatModel(replies=[reply(tool_calls=[call]), answer_from_tool])
    try:
        graph = graph_mod.build_graph(
            settings, chat_model=model, tools=tools, checkpointer=InMemorySaver()
        )
        state = graph.invoke(
            {"query": "How many miles is 5 km?"}, {"configurable": {"thread_id": "s1"}}
        )
    finally:
        shutdown_mcp(tools)
    records = state["tool_calls"]
    assert len(records) == 1
    assert records[0]["tool"] == "units__convert_units"
    assert records[0]["error"] is None
    assert "5 km = 3.10686 mi" in records[0]["result"]
    assert records[0]["duration_s"] >= 0
    assert state["answer"] == "It is 3.10686 mi."
    offered = {t["function"]["name"] for t in model.bound_tools[0]}
    assert "units__convert_units" in offered
    assert "units__crash" not in offered and "units__sleep_forever" not in offered
