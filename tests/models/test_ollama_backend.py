"""The real ChatOllama client inside the graph, against a server speaking Ollama's protocol."""

from __future__ import annotations

from pathlib import Path

import pytest

from local2.errors import ModelError, ModelUnavailable
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, LoopBrain, Reply, RuleBrain, ScriptBrain
from tests.kit.helpers import make_settings


def ollama_agent(tmp_path: Path, url: str, **gen: object) -> Agent:
    settings = make_settings(
        tmp_path,
        system={"ollama_host": url},
        generator={"backend": "ollama", **gen},
        web={"search": {"provider": "mock"}},
    )
    return Agent(settings, backend="ollama", memory=None, critic=None)


def test_thinking_arrives_apart_and_never_reaches_history(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as server:
        agent = ollama_agent(tmp_path, server.url)
        items: list[tuple[str, object]] = []
        payload = agent.turns.ask(
            "What is the capital of France?", "s1", on_item=lambda k, d: items.append((k, d))
        )
        assert "Paris" in payload["answer"]
        assert payload["thinking"].strip()
        assert payload["thinking"] not in payload["answer"]
        assert payload["backend"] == "ollama" and payload["model"] == "gemma4:12b"
        kinds = [k for k, _ in items]
        assert kinds.count("thinking") >= 2 and kinds.count("token") >= 2, (
            "thinking and answer stream"
        )
        request = server.chat_requests[-1]
        assert request["options"]["num_ctx"] == 32000
        assert request["think"] is True and request["keep_alive"] == "10m"

        agent.turns.ask("Tell me about the Python GIL.", "s1")
        follow_up = agent.turns.ask("Why was it introduced?", "s1")
        assert "What do you mean" not in follow_up["answer"], "the follow-up needs the first turn"
        sent = server.chat_requests[-1]["messages"]
        assert not any(m.get("thinking") for m in sent), "thinking went back to the model"
        assert not any(payload["thinking"] in (m.get("content") or "") for m in sent)


def test_native_tool_calls_through_the_whole_loop(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as server:
        agent = ollama_agent(tmp_path, server.url)
        payload = agent.turns.ask("What major AI news broke this week?", "s1")
        assert [c["tool"] for c in payload["tool_calls"]] == ["web_search"]
        assert "Today's date: " in payload["tool_calls"][0]["result"]
        assert payload["tool_calls"][0]["provider"] == "mock"
        events = payload["events"]
        assert events.index("tool.request.web_search") < events.index("tool.result.web_search")
        tool_message = server.chat_requests[-1]["messages"][-1]
        assert tool_message["role"] == "tool" and "untrusted" in tool_message["content"]


def test_inline_think_tags_are_moved_to_thinking(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain(), think_mode="inline") as server:
        payload = ollama_agent(tmp_path, server.url).turns.ask(
            "What is the capital of France?", "s1"
        )
        assert "<think>" not in payload["answer"] and "Paris" in payload["answer"]
        assert payload["thinking"].strip()


def test_model_not_pulled_names_the_pull_command(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain(), models=["other:1b"]) as server:
        with pytest.raises(ModelUnavailable) as info:
            ollama_agent(tmp_path, server.url)  # known before any question is asked
        assert "ollama pull gemma4:12b" in info.value.fix
        assert "installed: other:1b" in info.value.message
        assert server.chat_requests == []


def test_model_removed_after_start_names_the_pull_command(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as server:
        agent = ollama_agent(tmp_path, server.url)
        server.models = ["other:1b"]  # `ollama rm gemma4:12b` while the app runs
        with pytest.raises(ModelUnavailable) as info:
            agent.turns.ask("hello", "s1")
        assert "ollama pull gemma4:12b" in info.value.fix


def test_stream_broken_mid_answer_records_no_half_turn(tmp_path: Path) -> None:
    script = ScriptBrain(
        [
            Reply(content="A complete first answer.", thinking="ok"),
            Reply(content="This answer will be cut off " * 20, thinking="hm", drop_after_chunks=4),
        ]
    )
    with FakeOllama(script) as server:
        agent = ollama_agent(tmp_path, server.url)
        agent.turns.ask("first question", "s1")
        with pytest.raises(ModelError) as info:
            agent.turns.ask("second question", "s1")
        assert "broke mid-answer" in info.value.message
        history = agent.sessions.history("s1")
        assert [h["user"] for h in history] == ["first question"]


def test_nothing_listening_says_how_to_start_ollama(tmp_path: Path) -> None:
    agent = ollama_agent(tmp_path, "http://127.0.0.1:9")
    with pytest.raises(ModelUnavailable) as info:
        agent.turns.ask("hello", "s1")
    assert "ollama serve" in info.value.fix


def test_loop_guard_with_a_model_that_never_stops(tmp_path: Path) -> None:
    with FakeOllama(LoopBrain("web_search")) as server:
        payload = ollama_agent(tmp_path, server.url, max_tool_iterations=2).turns.ask("news?", "s1")
        assert "tool.loop_limit" in payload["events"]
        assert len(payload["tool_calls"]) == 2
        assert payload["answer"].startswith("Forced synthesis")
        assert "tools" not in server.chat_requests[-1] or not server.chat_requests[-1]["tools"]
