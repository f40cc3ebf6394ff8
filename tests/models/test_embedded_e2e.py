"""A whole turn on the real embedded model (SmolLM2-135M via llama.cpp), no Ollama anywhere."""

from __future__ import annotations

import pytest

from local2.config import load_settings
from local2.graph._answer import unusable_reason
from local2.service.agent import Agent
from local2.tools._search import CANNED_NOTE
from tests.kit.helpers import local2, make_settings

pytest.importorskip("llama_cpp", reason="the embedded extra is not installed")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Agent:
    tmp = tmp_path_factory.mktemp("embedded")
    settings = make_settings(tmp, embedded={"max_tokens": 48}, web={"search": {"provider": "mock"}})
    # backend auto with nothing listening at OLLAMA_HOST: the embedded model, with a notice.
    return Agent(settings, memory=None, critic=None)


def test_auto_falls_back_to_the_embedded_model_with_a_notice(agent: Agent) -> None:
    assert agent.services.backend == "embedded" and not agent.services.native_tools
    assert agent.notice and "ollama serve" in agent.notice and "ollama pull" in agent.notice
    assert any("critic is off with the embedded demo model" in n for n in agent.notices)


def test_the_critic_is_off_by_default_with_the_embedded_model(tmp_path) -> None:
    settings = make_settings(tmp_path, web={"search": {"provider": "mock"}})
    agent = Agent(settings, memory=None)
    try:
        assert agent.services.critic is None
        payload = agent.turns.ask("Say hello.", "c1")
        assert "critique" not in payload and "critique.result" not in payload["events"]
    finally:
        agent.close()


def test_a_question_is_answered_and_streamed(agent: Agent) -> None:
    items: list[tuple[str, object]] = []
    payload = agent.turns.ask(
        "What is the capital of France?", "e1", on_item=lambda k, d: items.append((k, d))
    )
    assert payload["answer"].strip()
    assert payload["backend"] == "embedded"
    assert sum(1 for k, _ in items if k == "token") >= 2, "the answer did not stream"
    for subject in ("query.received", "response.generation", "answer.dialog"):
        assert subject in payload["events"]


def test_time_sensitive_question_takes_the_router_tool_path(agent: Agent) -> None:
    payload = agent.turns.ask("What major AI news broke this week?", "e2")
    tools = [c["tool"] for c in payload["tool_calls"]]
    assert "web_search" in tools
    assert payload["tool_calls"][0]["result"].startswith(f"{CANNED_NOTE}\nToday's date:")
    events = payload["events"]
    assert events.index("tool.request.web_search") < events.index("tool.result.web_search")
    assert "tool.routed" in events  # the embedded model cannot call tools natively
    schemas = {t.name: t.parameters for t in load_settings().generator.tools}
    assert payload["answer"].strip() and unusable_reason(payload["answer"], schemas) is None


def test_the_terminal_gets_the_notices_while_the_model_loads() -> None:
    """``local2 ask`` with no Ollama and a fresh home, as a person runs it: the notices are
    printed while the warm-up thread loads the model, and must reach stderr (llama-cpp-python
    used to point fds 1 and 2 at /dev/null for the load). llama.cpp's loading chatter does
    not reach the terminal; the answer and the session line do."""
    done = local2("ask", "What is the capital of France?", env={})
    assert done.returncode == 0, done.stderr
    assert "Using the embedded demo model" in done.stderr
    assert "ollama serve" in done.stderr and "ollama pull" in done.stderr
    assert "critic is off with the embedded demo model" in done.stderr
    assert "session " in done.stderr and "query " in done.stderr
    assert done.stdout.strip()  # the answer
    for chatter in ("llama_model_loader", "print_info", "load_tensors", "llama_context"):
        assert chatter not in done.stderr + done.stdout
