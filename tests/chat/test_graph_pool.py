"""LangGraph's runs share one thread pool (``local2.graph._graph``): a turn starts no threads
for its checkpoint writes, and a run that bounds its concurrency keeps a pool of its own."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from local2.config import load_settings
from local2.graph import _graph as graph_pool
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, RuleBrain


@pytest.fixture
def started_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Names of the threads started while the test runs."""
    names: list[str] = []
    start = threading.Thread.start

    def recording(self: threading.Thread) -> None:
        names.append(self.name)
        start(self)

    monkeypatch.setattr(threading.Thread, "start", recording)
    yield names


def test_a_turn_reuses_the_shared_pool(tmp_path: Path, started_threads: list[str]) -> None:
    with FakeOllama(RuleBrain()) as fake:
        settings = load_settings(
            overrides={
                "system": {"ollama_host": fake.url, "data_dir": str(tmp_path)},
                "generator": {"backend": "ollama"},
                "memory": {"embedder": "lexical"},
                "web": {"search": {"provider": "mock"}},
            }
        )
        agent = Agent(settings, backend="ollama")
        try:
            for question in ("What is the capital of France?", "What is the Python GIL?"):
                started_threads.clear()
                payload = agent.turns.start(question, "pool", tokens=False).until_final()
                assert payload["answer"] and payload["critique"]
                assert agent.turns.wait_idle(30)
        finally:
            agent.close()
    # The second turn: its own worker and the critic's deadline thread, nothing for LangGraph.
    assert not [n for n in started_threads if n.startswith("ThreadPoolExecutor")]
    assert len(started_threads) <= 3, started_threads


class Count(TypedDict):
    n: int


def counting_graph() -> object:
    graph = StateGraph(Count)
    graph.add_node("a", lambda s: {"n": s["n"] + 1})
    graph.add_node("b", lambda s: {"n": s["n"] + 1})
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_runs_write_their_checkpoints_in_the_shared_pool(started_threads: list[str]) -> None:
    assert graph_pool.install() and graph_pool.install()  # idempotent
    graph = counting_graph()
    config = {"configurable": {"thread_id": "t"}}
    assert graph.invoke({"n": 0}, config)["n"] == 2  # type: ignore[attr-defined]
    started_threads.clear()
    for _ in range(3):
        assert graph.invoke({"n": 0}, config)["n"] == 2  # type: ignore[attr-defined]
    assert not [n for n in started_threads if n.startswith("ThreadPoolExecutor")]
    history = list(graph.get_state_history(config))  # type: ignore[attr-defined]
    assert len(history) == 4 * 4  # every step of every run was checkpointed


def test_a_run_bounding_its_concurrency_keeps_its_own_pool(started_threads: list[str]) -> None:
    graph_pool.install()
    graph = counting_graph()
    config = {"configurable": {"thread_id": "bounded"}, "max_concurrency": 1}
    assert graph.invoke({"n": 0}, config)["n"] == 2  # type: ignore[attr-defined]
    own = [n for n in started_threads if n.startswith("ThreadPoolExecutor")]
    assert own, "a bounded run should have made its own pool"
