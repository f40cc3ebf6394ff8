"""``Agent.warm_up``: a server's first turn's one-time work done at start, writing nothing.

Real ChatOllama against the Ollama-protocol test server, real Chroma, real SQLite.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.memory.helpers import ollama_agent


def test_warm_up_asks_no_model_and_writes_nothing(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as server:
        agent = ollama_agent(tmp_path, server.url)
        told = agent.turns.ask("My favourite colour is teal.", "s")
        assert agent.turns.wait_idle(30)
        memory = agent.services.memory
        assert memory is not None and memory.count() >= 1  # the index has something to load
        memory.embedder.close()  # as in a server that has just started: no client yet
        assert memory.embedder._client is None
        requests, checkpoints = len(server.served), len(agent.sessions.checkpoints("s"))

        agent.warm_up()

        assert memory.embedder._client is not None  # made now, not by the first question
        assert len(server.served) == requests  # no chat, no embedding: the model is not used
        assert len(agent.sessions.checkpoints("s")) == checkpoints
        assert agent.sessions.history("s")[-1]["query_id"] == told["query_id"]
        assert memory.count() >= 1
        asked = agent.turns.ask(
            "What is my favourite colour?", "s"
        )  # and turns still work after it
        assert "teal" in asked["answer"].lower()
        agent.close()


def test_a_failing_warm_up_is_logged_and_changes_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeOllama(RuleBrain()) as server:
        agent = ollama_agent(tmp_path, server.url)
        memory = agent.services.memory
        assert memory is not None

        def broken() -> None:
            raise RuntimeError("index unreadable")

        memory.warm_up = broken  # type: ignore[method-assign]
        with caplog.at_level(logging.WARNING, logger="local2.service.agent"):
            agent.warm_up()
        assert "warm-up failed: RuntimeError: index unreadable" in caplog.text
        assert "Paris" in agent.turns.ask("What is the capital of France?", "t")["answer"]
        agent.close()
