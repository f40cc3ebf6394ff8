"""``POST /sessions/{id}/stop`` over a real socket: the real ChatOllama streaming from the
Ollama-protocol test server, uvicorn serving the app, httpx as the client."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from local2.http._app import create_api
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, ScriptBrain
from tests.kit.helpers import make_settings
from tests.kit.served import Served

WORDS = " ".join(f"word{n}" for n in range(200))  # after 2 s, a word every 50 ms


@pytest.fixture
def slow(tmp_path: Path) -> Iterator[tuple[str, Agent]]:
    with FakeOllama(ScriptBrain([WORDS]), delay_s=2.0, chunk_delay_s=0.05) as fake:
        settings = make_settings(
            tmp_path, system={"ollama_host": fake.url}, generator={"backend": "ollama"}
        )
        agent = Agent(settings, tools=[], memory=None, critic=None)
        with Served(create_api(agent)) as url:
            yield url, agent
        agent.close()


def wait_running(agent: Agent, session: str) -> None:
    deadline = time.monotonic() + 30
    while not agent.turns.is_running(session):
        assert time.monotonic() < deadline, "the turn never started"
        time.sleep(0.02)


def test_nothing_running_is_409(slow: tuple[str, Agent]) -> None:
    url, _agent = slow
    answer = httpx.post(f"{url}/sessions/idle-1/stop", timeout=10)
    assert answer.status_code == 409
    assert "Nothing to stop in session 'idle-1'" in answer.json()["detail"]


def test_a_waiting_query_gets_stopped_and_nothing_is_recorded(slow: tuple[str, Agent]) -> None:
    url, agent = slow
    with ThreadPoolExecutor(1) as pool:
        body = {"query": "Tell me a long story.", "session_id": "story-1"}
        waiting = pool.submit(httpx.post, f"{url}/query", json=body, timeout=60)
        wait_running(agent, "story-1")
        stop = httpx.post(f"{url}/sessions/story-1/stop", timeout=10)
        assert stop.status_code == 200, stop.text
        assert stop.json() == {"session_id": "story-1", "status": "stopping"}
        answered = waiting.result(timeout=30)
    assert answered.status_code == 409, answered.text
    detail = answered.json()["detail"]
    assert detail["status"] == "stopped" and "nothing was recorded" in detail["error"]
    history = httpx.get(f"{url}/sessions/story-1/history", timeout=10)
    assert history.status_code == 404 or history.json()["turns"] == []
    again = httpx.post(f"{url}/sessions/story-1/stop", timeout=10)
    assert again.status_code == 409  # nothing left to stop


def test_a_stream_ends_with_stopped_after_its_tokens(slow: tuple[str, Agent]) -> None:
    url, _agent = slow
    events: list[tuple[str, dict]] = []
    body = {"query": "Tell me a long story.", "session_id": "story-2"}
    with httpx.stream("POST", f"{url}/query/stream", json=body, timeout=60) as stream:
        name = ""
        for line in stream.iter_lines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((name, json.loads(line.removeprefix("data: "))))
                tokens = [e for e in events if e[0] == "token"]
                if name == "token" and len(tokens) == 3:  # the answer streams: stop it
                    stop = httpx.post(f"{url}/sessions/story-2/stop", timeout=10)
                    assert stop.status_code == 200, stop.text
    names = [n for n, _ in events]
    assert names[-1] == "stopped" and "done" not in names and "answer" not in names
    assert events[-1][1]["status"] == "stopped"
    assert "word0" in "".join(d["text"] for n, d in events if n == "token")
    history = httpx.get(f"{url}/sessions/story-2/history", timeout=10)
    assert history.status_code == 404 or history.json()["turns"] == []
