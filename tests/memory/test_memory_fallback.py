"""Memory is never silently off: a fallback embedder in its own collection, and a notice."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from local2.cli import app
from local2.memory._embedders import (
    LexicalEmbedder,
    MiniLMEmbedder,
    OllamaEmbedder,
    choose_embedder,
)
from local2.memory._facts import USER_REQUEST, Fact
from local2.memory._store import EngramStore
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama
from tests.kit.helpers import make_settings

SISTER = Fact("The user's sister's name is Ines.", "sister name", USER_REQUEST)


@pytest.fixture
def no_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without the offline model package: the next fallback is lexical."""
    monkeypatch.setattr("local2.memory._embedders.minilm_available", lambda: False)


def test_the_configured_embedder_is_used_when_available(tmp_path: Path) -> None:
    with FakeOllama() as srv:
        choice = choose_embedder(
            make_settings(tmp_path, system={"ollama_host": srv.url}, memory={"embedder": "ollama"})
        )
    assert isinstance(choice.embedder, OllamaEmbedder) and choice.notice is None


def test_an_unavailable_embedder_falls_back_with_a_notice(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, memory={"embedder": "ollama"})  # nothing on port 9
    choice = choose_embedder(settings)
    assert isinstance(choice.embedder, MiniLMEmbedder)  # the packaged offline model
    assert choice.missed == "nomic-embed-text"
    assert "ollama serve" in (choice.notice or "") and "local2 memory reembed" in choice.notice


def test_auto_tells_when_memories_were_built_with_a_better_embedder(
    tmp_path: Path, no_minilm: None
) -> None:
    settings = make_settings(tmp_path, memory={"embedder": "auto"})
    assert choose_embedder(settings).notice is None  # nothing better was ever used here
    choice = choose_embedder(settings, built_with=["nomic-embed-text"])
    assert isinstance(choice.embedder, LexicalEmbedder)
    assert "nomic-embed-text is unavailable" in (choice.notice or "")


def test_fallback_and_return_keep_one_memory_without_mixing_vectors(
    tmp_path: Path, no_minilm: None
) -> None:
    with FakeOllama() as srv:
        settings = make_settings(
            tmp_path, system={"ollama_host": srv.url}, memory={"embedder": "ollama"}
        )
        home = EngramStore.open(settings)
        before = home.save_fact(SISTER, session_id="s1", query_id="q1").id
        assert home.collection.name == "engrams.nomic-embed-text" and home.notice is None

        srv.models = ["qwen3:4b"]  # the embedding model is gone (Ollama restarted without it)
        away = EngramStore.open(settings, sync="now")
        assert away.collection.name == "engrams.lexical-hash-512"
        assert "fallback embedder lexical-hash-512" in (away.notice or "")
        assert away.get(before) is not None  # re-embedded for the fallback, not mixed
        assert away.recall("sister's name", k=1)[0]["id"] == before
        during = away.save_fact(
            Fact("The user works at Acme Robotics.", "workplace", USER_REQUEST),
            session_id="s2",
            query_id="q2",
        ).id

        srv.models = ["qwen3:4b", "nomic-embed-text"]  # back
        embedded_before = len(srv.embed_requests)
        back = EngramStore.open(settings)  # catches up in the background
        assert back.notice is None and back.wait_for_sync(timeout=30)
        assert back.get(during)["source"] == USER_REQUEST
        assert back.recall("where do I work? Acme Robotics", k=1)[0]["id"] == during
        copied = [i for b in srv.embed_requests[embedded_before:] for i in b.get("input", [])]
        assert "search_document: The user works at Acme Robotics." in copied
        back.close()


def test_the_agent_and_the_cli_say_so(tmp_path: Path, no_minilm: None) -> None:
    settings = make_settings(tmp_path, memory={"embedder": "ollama"})
    agent = Agent(settings, chat_model=ScriptedChatModel(replies=[reply("Hi.")]), critic=None)
    assert agent.services.memory is not None
    assert "Memory is using the fallback embedder" in (agent.notice or "")
    agent.close()

    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "memory.yaml").write_text("embedder: ollama\n")
    listed = CliRunner().invoke(app, ["--config", str(cfg), "memory", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert listed.stdout == ""  # nothing stored yet, and JSON output stays clean
    assert "Notice:" in listed.stderr and "ollama serve" in listed.stderr


def test_memory_that_cannot_open_is_off_with_a_notice(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the data directory should be")
    settings = make_settings(
        blocked, system={"checkpointer": "memory"}, memory={"embedder": "lexical"}
    )
    agent = Agent(settings, chat_model=ScriptedChatModel(replies=[reply("Hi.")]), critic=None)
    assert agent.services.memory is None
    assert "Memory is off for this run" in (agent.notice or "")
    agent.close()
