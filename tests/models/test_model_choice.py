"""The model a person chooses, what Ollama says it can do, and who decides on tools.

Against the Ollama-protocol server with models registered with capabilities (``/api/show``),
through the real ``local2`` command and the real ChatOllama client.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local2.errors import ModelNotPulled
from local2.models._backend import make_chat_model
from local2.models._ollama_catalog import ModelInfo, list_models, parse_show
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeModel, FakeOllama, Reply, RuleBrain
from tests.kit.helpers import local2, make_settings, mock_search_config
from tests.tools.helpers import BRAVE_BODY, ApiServer

TOOLS = ("completion", "tools", "thinking")
NO_TOOLS = FakeModel("gemma3:1b", ("completion",), context_length=32768, parameter_size="1B")
# Questions the router was not written against: each has a time-sensitive cue, so a model
# that cannot call tools is helped by the router, while a capable model that answers
# directly keeps its own decision.
HELD_OUT = [
    "How many people live in Reykjavik nowadays?",
    "What's the exchange rate from euros to yen today?",
    "Which films are showing in Leeds this weekend?",
    "Has the Suez canal reopened yet after this month's storm?",
]


def direct_answer(request: dict) -> Reply:
    """A model that always answers directly (never calls a tool), saying whether it was
    offered tools natively or only in its prompt."""
    system = " ".join(m["content"] for m in request["messages"] if m["role"] == "system")
    if any(m["role"] == "user" and m["content"].startswith("Result of ") for m in
           request["messages"]):  # fmt: skip
        return Reply(content="From the search results: it depends on the day.")
    native = bool(request.get("tools"))
    prompted = "You can use these tools:" in system
    return Reply(content=f"My own answer (native tools: {native}, prompted tools: {prompted}).")


def ask_json(question: str, model: str, env: dict[str, str]) -> dict:
    done = local2("ask", question, "--json", "--model", model, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_held_out_questions_router_only_for_a_model_without_tools(tmp_path: Path) -> None:
    conf = mock_search_config(tmp_path / "conf")
    (conf / "memory.yaml").write_text("enabled: false\n")  # not what is measured here
    with FakeOllama(direct_answer, models=[FakeModel("gemma4:12b", TOOLS), NO_TOOLS]) as srv:
        env = {
            "OLLAMA_HOST": srv.url,
            "LOCAL2_HOME": str(tmp_path / "home"),
            "LOCAL2_CONFIG": str(conf),
        }
        for question in HELD_OUT:
            capable = ask_json(question, "gemma4:12b", env)
            assert capable["tool_calls"] == [] and "tool.routed" not in capable["events"]
            assert "native tools: True" in capable["answer"]
            assert capable["model"] == "gemma4:12b"

            small = ask_json(question, "gemma3:1b", env)
            assert "tool.routed" in small["events"], question
            assert [c["tool"] for c in small["tool_calls"]] == ["web_search"]
            assert small["answer"] == "From the search results: it depends on the day."
        for body in srv.chat_requests:  # Ollama would refuse tools/think for gemma3:1b
            if body["model"] == "gemma3:1b":
                assert not body.get("tools") and body.get("think") is not True
                first = body["messages"][0]
                if first["role"] == "system":  # the answering calls (not the critic's)
                    assert "You can use these tools:" in first["content"]
        assert srv.errors == []


def test_a_model_that_is_not_pulled_is_never_replaced(tmp_path: Path) -> None:
    with FakeOllama(RuleBrain(), models=["qwen3:4b", "nomic-embed-text"]) as srv:
        env = {"OLLAMA_HOST": srv.url, "LOCAL2_HOME": str(tmp_path / "home")}
        done = local2("ask", "hello", "--model", "llama3.2", env=env)
        chats = len(srv.chat_requests)
    assert done.returncode != 0
    assert "Model 'llama3.2' is not pulled" in done.stderr
    assert "ollama pull llama3.2" in done.stderr
    assert "qwen3:4b" in done.stderr and "nomic-embed-text" in done.stderr  # what is there
    assert "embedded" not in done.stderr.lower() and "ollama serve" not in done.stderr
    assert "Traceback" not in done.stderr and chats == 0


def test_auto_falls_back_to_embedded_only_when_ollama_does_not_answer(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, system={"ollama_host": "http://127.0.0.1:9"})
    chosen = make_chat_model(settings, "auto")
    assert chosen.backend == "embedded" and chosen.native_tools is False
    assert chosen.notice and "Cannot reach Ollama" in chosen.notice
    with FakeOllama(models=["qwen3:4b"]) as srv:
        settings = make_settings(tmp_path, system={"ollama_host": srv.url})
        with pytest.raises(ModelNotPulled, match="gemma4:12b"):
            make_chat_model(settings, "auto")  # Ollama answers: its model is missing, say so
        chosen = make_chat_model(settings, "auto", "qwen3:4b")
        assert (chosen.backend, chosen.name, chosen.native_tools) == ("ollama", "qwen3:4b", True)


def test_capabilities_decide_tools_and_thinking(tmp_path: Path) -> None:
    gemma4 = FakeModel("gemma4:12b", TOOLS, context_length=131072, parameter_size="12B")
    with FakeOllama(RuleBrain(), models=[NO_TOOLS, gemma4]) as srv:
        settings = make_settings(tmp_path, system={"ollama_host": srv.url})
        small = make_chat_model(settings, "ollama", "gemma3:1b")
        assert small.native_tools is False
        assert small.model.reasoning is None  # Ollama answers 400 to think=true here
        agent = Agent(settings, backend="ollama", model="gemma3:1b", memory=None, critic=None)
        payload = agent.turns.ask("What is the capital of France?", "s1")
        assert "Paris" in payload["answer"]
        assert srv.errors == [] and not srv.chat_requests[-1].get("tools")
        infos = {m.name: m for m in list_models(srv.url)}
        assert infos["gemma3:1b"] == ModelInfo("gemma3:1b", ("completion",), 32768, "1B")
        assert infos["gemma4:12b"].can("tools") and infos["gemma4:12b"].context_length == 131072
        assert infos["gemma3:1b"].summary() == "text only (no tool calling) · 33k context · 1B"


def test_an_older_server_without_capabilities_is_treated_as_unknown() -> None:
    info = parse_show("old:7b", {"details": {"parameter_size": "7B"}, "model_info": {}})
    assert info.capabilities is None and info.can("tools") is None
    assert info.summary() == "capabilities unknown · 7B"


def test_doctor_without_the_default_model_prints_the_pull_line(tmp_path: Path) -> None:
    with FakeOllama(models=["qwen3:4b", NO_TOOLS, "nomic-embed-text"]) as srv:
        env = {"OLLAMA_HOST": srv.url, "LOCAL2_HOME": str(tmp_path / "home")}
        table = local2("doctor", env=env)
        embedded = json.loads(local2("doctor", "--json", "--backend", "embedded", env=env).stdout)
        checks = {c["name"]: c for c in json.loads(local2("doctor", "--json", env=env).stdout)}
        small = {
            c["name"]: c
            for c in json.loads(local2("doctor", "--json", "--model", "gemma3:1b", env=env).stdout)
        }
    assert "ollama pull gemma4:12b" in table.stdout and table.returncode == 1
    assert checks["chat model"]["status"] == "fail"  # Ollama answers: asking would fail
    assert next(c for c in embedded if c["name"] == "chat model")["status"] == "warn"
    assert checks["chat model"]["detail"] == "gemma4:12b is not pulled"
    listed = checks["installed models"]["detail"]
    assert "qwen3:4b: tools, thinking · 41k context · 4.0B" in listed
    assert "gemma3:1b: text only (no tool calling)" in listed
    assert "nomic-embed-text:latest: embedding" in listed
    assert small["chat model"]["status"] == "warn"
    assert "gemma3:1b lacks tool calling" in small["chat model"]["detail"]
    assert small["chat model"]["fix"] == "pick one that can, e.g. --model qwen3:4b"


def test_doctor_names_the_search_provider_auto_picks_and_searches_with_it(
    tmp_path: Path,
) -> None:
    """auto picks Brave for its key; doctor asks it one real question (here a loopback Brave)."""
    brave = ApiServer(lambda req: (200, BRAVE_BODY))
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "web.yaml").write_text(f"search:\n  brave_url: {brave.url}\n")
    env = {
        "LOCAL2_HOME": str(tmp_path / "home"),
        "LOCAL2_CONFIG": str(conf),
        "BRAVE_API_KEY": "brave-secret",
    }
    try:
        checks = {c["name"]: c for c in json.loads(local2("doctor", "--json", env=env).stdout)}
    finally:
        brave.close()
    search = checks["web search"]
    assert search["status"] == "ok" and search["detail"].startswith("auto: brave")
    assert "order brave → ddgs" in search["detail"] and "brave-secret" not in search["detail"]
    assert "brave answered a test search (1 result," in search["detail"]
    assert [r["headers"]["x-subscription-token"] for r in brave.requests] == ["brave-secret"]
