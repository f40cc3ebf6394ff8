"""A failed search is not an invitation to invent (search fails as it does offline: ``ddgs``
through a proxy where nothing listens, see ``tests/conftest.py``).

- A model that cannot call tools natively (the embedded one, through the router) gets no say:
  the person reads which tool failed, why, and what to do — ``local2 ask`` as a person runs it.
- A tool-capable model (the real ChatOllama against the Ollama-protocol server) is told the
  failure plainly, and the critic flags a figure that nothing this turn contained.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from local2.http._app import create_api
from local2.service.agent import Agent
from local2_testkit.brains import Reply, RuleBrain
from local2_testkit.ollama_server import FakeOllama, ScriptBrain
from tests.kit.helpers import local2, make_settings
from tests.kit.served import Served


@pytest.mark.slow
def test_the_embedded_model_does_not_answer_when_its_search_failed() -> None:
    pytest.importorskip("llama_cpp", reason="the embedded extra is not installed")
    done = local2("ask", "What is the current price of Bitcoin in US dollars?", env={})
    assert done.returncode == 0, done.stderr
    answer = done.stdout
    assert "I could not look this up, so I will not guess" in answer
    assert (
        "web_search failed: cannot reach the search engines: the connection was refused" in answer
    )
    assert "What to do: Check this machine's network connection" in answer
    assert "web_search" in done.stderr  # the call was shown as it ran


def test_a_tool_capable_model_is_told_plainly_and_its_invented_figure_is_flagged(
    tmp_path: Path,
) -> None:
    search = Reply(tool_calls=[{"name": "web_search", "arguments": {"query": "bitcoin price"}}])
    invented = "The current price of Bitcoin in US dollars is currently 1.99 dollars."
    with FakeOllama(ScriptBrain([search, invented, RuleBrain()])) as fake:
        settings = make_settings(
            tmp_path, system={"ollama_host": fake.url}, generator={"backend": "ollama"}
        )
        agent = Agent(settings, memory=None)
        with Served(create_api(agent)) as url:
            body = {"query": "What is the price of Bitcoin now?", "wait": "critique"}
            payload = httpx.post(f"{url}/query", json=body, timeout=120).json()
        agent.close()
        told = fake.chat_requests[1]["messages"][-1]
    assert told["role"] == "tool"
    assert told["content"].startswith("The web_search call failed")
    assert "do not guess" in told["content"] and "cannot reach the search" in told["content"]
    (call,) = payload["tool_calls"]
    assert call["error"] and "network connection" in call["fix"]
    assert payload["answer"] == invented  # a tool-capable model's answer is its own...
    flags = payload["critique"]["flags"]
    assert "unsupported figure: 1.99 (in no tool result or message)" in flags  # ...but flagged
