"""The graph as LangGraph Server loads it: langgraph.json -> local2.platform.graph:graph."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from langgraph.store.memory import InMemoryStore

from local2.platform.graph import make_graph
from local2.ports import free_port
from local2.testing.ollama_server import FakeOllama, RuleBrain
from tests.conftest import make_settings

ROOT = Path(__file__).parents[1]
LANGGRAPH = Path(sys.executable).with_name("langgraph")


def test_langgraph_json_names_the_module_graph() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
    path, _, name = config["graphs"]["local2"].partition(":")
    source = (ROOT / path).read_text(encoding="utf-8")
    assert name == "graph" and f"\n{name} = make_graph()" in source


def test_factory_builds_a_graph_without_its_own_checkpointer(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as fake:
        settings = make_settings(
            tmp_path,
            system={"ollama_host": fake.url},
            generator={"backend": "ollama"},
            memory={"enabled": False},
            critic={"enabled": False},
        )
        store = InMemoryStore()
        graph = make_graph(settings, store=store)
        assert graph.checkpointer is None  # LangGraph Server supplies its own
        state = graph.invoke({"query": "What is the capital of France?"})
    assert "Paris" in state["answer"] and state["thinking"]
    (turn,) = store.search(("local2", "turns"))
    assert turn.key == state["history_head"] and "Paris" in turn.value["assistant"]
    assert not (settings.data_dir / "checkpoints.sqlite").exists()


@pytest.mark.slow
@pytest.mark.skipif(not LANGGRAPH.exists(), reason="langgraph-cli[inmem] is not installed")
def test_langgraph_dev_serves_the_graph_with_threads_as_sessions(tmp_path: Path) -> None:
    port = free_port()
    with FakeOllama(RuleBrain()) as fake:
        env = {
            **os.environ,
            "OLLAMA_HOST": fake.url,
            "LOCAL2_HOME": str(tmp_path / "home"),
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGSMITH_TRACING": "false",
        }
        command = [str(LANGGRAPH), "dev", "--no-browser", "--no-reload"]
        command += ["--host", "127.0.0.1", "--port", str(port)]
        # Run from a stand-in for the checkout (the shipped langgraph.json, src linked in), so
        # the server's own files (.langgraph_api/) land in tmp_path, not in the repository.
        (tmp_path / "langgraph.json").write_text((ROOT / "langgraph.json").read_text())
        (tmp_path / "src").symlink_to(ROOT / "src", target_is_directory=True)
        log = (tmp_path / "langgraph.log").open("w")
        server = subprocess.Popen(
            command,
            cwd=tmp_path,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                assert server.poll() is None, (tmp_path / "langgraph.log").read_text()
                assert time.monotonic() < deadline, "langgraph dev did not start"
                try:
                    if httpx.get(f"{base}/ok", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            with httpx.Client(base_url=base, timeout=60) as client:
                thread = client.post("/threads", json={}).json()["thread_id"]
                answers = []
                for question in ("Tell me about the Python GIL.", "Why was it introduced?"):
                    run = client.post(
                        f"/threads/{thread}/runs/wait",
                        json={"assistant_id": "local2", "input": {"query": question}},
                    )
                    assert run.status_code == 200, run.text
                    answers.append(run.json()["answer"])
                history = client.post(f"/threads/{thread}/history", json={"limit": 50}).json()
                stored = client.post(
                    "/store/items/search",
                    json={"namespace_prefix": ["local2", "turns"], "limit": 50},
                ).json()["items"]
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(30)
            log.close()
    assert "Global Interpreter Lock" in answers[0]
    assert (
        "introduced" in answers[1] and "What do you mean" not in answers[1]
    )  # the thread's history
    assert len(history) > 6  # the server's checkpointer kept every step
    # The clean turns are in the platform's store, not in a local file.
    assert sorted(i["value"]["user"] for i in stored) == [
        "Tell me about the Python GIL.",
        "Why was it introduced?",
    ]
    assert {i["value"]["session_id"] for i in stored} == {thread}
    assert not (tmp_path / "home" / "checkpoints.sqlite").exists()
