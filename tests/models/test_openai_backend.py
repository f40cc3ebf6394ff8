"""The openai backend: the real langchain-openai client inside the graph, against a loopback
server speaking the OpenAI chat-completions protocol (FakeOllama's /v1, as Ollama, vLLM and
llama.cpp's server offer it), streaming included."""

from __future__ import annotations

from pathlib import Path

import pytest

from local2.errors import ModelError, ModelUnavailable
from local2.ports import free_port
from local2.service.agent import Agent
from local2.service.doctor import SEED_MODEL
from local2_testkit.ollama_server import FakeOllama, Reply, RuleBrain, ScriptBrain
from tests.kit.helpers import local2, make_settings, mock_search_config


def openai_agent(tmp_path: Path, base_url: str, key_env: str = "OPENAI_API_KEY") -> Agent:
    openai = {"base_url": base_url, "api_key_env": key_env}
    settings = make_settings(
        tmp_path,
        generator={"backend": "openai", "openai": openai},
        web={"search": {"provider": "mock"}},  # canned results: no test reaches the internet
    )
    return Agent(settings, memory=None, critic=None)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_streams_apart_and_never_reaches_history(tmp_path: Path, field: str) -> None:
    with FakeOllama(RuleBrain(), openai_reasoning_field=field) as server:
        agent = openai_agent(tmp_path, server.openai_url)
        items: list[tuple[str, object]] = []
        payload = agent.turns.ask(
            "What is the capital of France?", "s1", on_item=lambda k, d: items.append((k, d))
        )
        assert "Paris" in payload["answer"] and payload["backend"] == "openai"
        assert payload["thinking"].strip() and payload["thinking"] not in payload["answer"]
        kinds = [k for k, _ in items]
        assert kinds.count("thinking") >= 2 and kinds.count("token") >= 2  # both streamed
        assert kinds.index("thinking") < kinds.index("token")
        request = server.openai_requests[-1]
        assert request["stream"] is True and request["model"] == SEED_MODEL

        agent.turns.ask("Tell me about the Python GIL.", "s1")
        follow_up = agent.turns.ask("Why was it introduced?", "s1")
        assert "What do you mean" not in follow_up["answer"]  # the history was sent
        sent = server.openai_requests[-1]["messages"]
        assert not any(field in m or "reasoning_content" in m for m in sent)
        assert not any(payload["thinking"] in str(m.get("content")) for m in sent)
        agent.close()


def test_native_tool_calls_round_trip_in_openai_form(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain()) as server:
        agent = openai_agent(tmp_path, server.openai_url)
        payload = agent.turns.ask("What major AI news broke this week?", "s1")
        assert [c["tool"] for c in payload["tool_calls"]] == ["web_search"]
        assert "Today's date: " in payload["tool_calls"][0]["result"]
        first, second = server.openai_requests[-2:]
        assert {t["function"]["name"] for t in first["tools"]} >= {"web_search"}
        call = next(m for m in second["messages"] if m.get("tool_calls"))["tool_calls"][0]
        assert call["function"]["name"] == "web_search"
        assert isinstance(call["function"]["arguments"], str)  # JSON text, as OpenAI sends it
        tool_message = second["messages"][-1]
        assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == call["id"]
        agent.close()


def test_inline_think_tags_are_moved_to_thinking(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain(), think_mode="inline") as server:
        payload = openai_agent(tmp_path, server.openai_url).turns.ask(
            "What is the capital of France?"
        )
    assert "<think>" not in payload["answer"] and "Paris" in payload["answer"]
    assert payload["thinking"].strip()


def test_the_key_comes_from_the_environment_and_never_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOllama(ScriptBrain(["Hello."]), api_key="team-key-123") as server:
        monkeypatch.setenv("VLLM_KEY", "wrong-key-456")
        agent = openai_agent(tmp_path, server.openai_url, "VLLM_KEY")
        with pytest.raises(ModelUnavailable) as refused:
            agent.turns.ask("Hi")
        assert "VLLM_KEY" in refused.value.fix and "wrong-key-456" not in str(refused.value)
        monkeypatch.setenv("VLLM_KEY", "team-key-123")
        agent = openai_agent(tmp_path, server.openai_url, "VLLM_KEY")
        assert agent.turns.ask("Hi")["answer"] == "Hello."


def test_unknown_model_and_server_down_name_the_fix(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain(), models=["other:1b"]) as server:
        with pytest.raises(ModelUnavailable, match="not served") as missing:
            openai_agent(tmp_path, server.openai_url).turns.ask("Hi")
        assert "/models" in missing.value.fix
    nothing_there = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelUnavailable, match="Cannot reach") as down:
        openai_agent(tmp_path, nothing_there).turns.ask("Hi")
    assert "base_url" in down.value.fix


def test_server_error_is_a_model_error_and_records_nothing(tmp_path: Path) -> None:
    oom = Reply(error="CUDA out of memory", status=500)
    with FakeOllama(ScriptBrain([oom, oom])) as server:  # the client retries a 5xx once
        agent = openai_agent(tmp_path, server.openai_url)
        with pytest.raises(ModelError, match="CUDA out of memory"):
            agent.turns.ask("Hi", "s1")
        assert agent.services.turn_log.sessions() == []
        agent.close()


def test_cli_ask_and_doctor_with_the_openai_backend(tmp_path: Path) -> None:
    conf = mock_search_config(tmp_path / "conf")
    with FakeOllama(RuleBrain()) as server:
        (conf / "generator.yaml").write_text(
            f"backend: openai\nopenai:\n  base_url: {server.openai_url}\n"
        )
        (conf / "memory.yaml").write_text("enabled: false\n")
        (conf / "critic.yaml").write_text("enabled: false\n")
        env = {"LOCAL2_CONFIG": str(conf), "LOCAL2_HOME": str(tmp_path / "home")}
        asked = local2("ask", "What is the capital of France?", env=env)
        doctor = local2("doctor", "--json", env=env)
    assert asked.returncode == 0, asked.stderr
    assert "Paris" in asked.stdout
    assert '"model server"' in doctor.stdout and f"{SEED_MODEL} served" in doctor.stdout
