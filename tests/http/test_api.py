"""The HTTP API over a real socket: uvicorn serving the app, httpx as the client."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from langchain_core.messages import AIMessage, BaseMessage

from local2.http._app import create_api, require_token
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from tests.kit.helpers import make_settings, meet
from tests.kit.served import Served


def echo(messages: list[BaseMessage]) -> AIMessage:
    time.sleep(0.3)
    return reply(f"you said: {messages[-1].content}", thinking="echoing")


@pytest.fixture
def api_url(tmp_path: Path) -> Iterator[str]:
    model = ScriptedChatModel(replies=[echo], repeat_last=True)
    agent = Agent(make_settings(tmp_path), chat_model=model, tools=[], memory=None, critic=None)
    with Served(create_api(agent)) as url:
        yield url
    agent.close()


def test_query_history_feedback_replay(api_url: str) -> None:
    with httpx.Client(base_url=api_url, timeout=30) as client:
        assert client.get("/health").json()["status"] == "ok"
        first = client.post("/query", json={"query": "hello", "session_id": "s1"}).json()
        assert first["answer"] == "you said: hello" and first["thinking"] == "echoing"
        client.post("/query", json={"query": "again", "session_id": "s1"})
        history = client.get("/sessions/s1/history").json()
        assert [t["user"] for t in history["turns"]] == ["hello", "again"]
        rated = client.post(
            "/feedback", json={"session_id": "s1", "query_id": first["query_id"], "rating": 5}
        )
        assert rated.status_code == 200
        assert [e["subject"] for e in rated.json()["events"]] == ["user.feedback", "reward.event"]
        turns = client.get("/sessions/s1/history").json()["turns"]
        assert turns[0]["reward"]["rating"] == 5

        before_second = next(
            c
            for c in history["checkpoints"]
            if c["next"] == ["generate"] and "again" in c["summary"]
        )
        replayed = client.post(
            "/sessions/s1/replay",
            json={"checkpoint_id": before_second["checkpoint_id"], "query": "changed"},
        ).json()
        assert replayed["answer"] == "you said: changed" and replayed["branch"]
        # The original branch is intact: its checkpoints are still listed.
        ids = {
            c["checkpoint_id"]
            for c in client.get("/sessions/s1/history?limit=500").json()["checkpoints"]
        }
        assert {c["checkpoint_id"] for c in history["checkpoints"]} <= ids


def test_invalid_bodies_get_422_and_unknown_sessions_404(api_url: str) -> None:
    with httpx.Client(base_url=api_url, timeout=30) as client:
        assert client.post("/query", json={"query": ""}).status_code == 422
        missing = client.post("/query", json={"session_id": "x"})
        assert missing.status_code == 422 and "query" in missing.json()["detail"]
        bad_rating = client.post(
            "/feedback", json={"session_id": "s", "query_id": "q", "rating": 9}
        )
        assert bad_rating.status_code == 422
        assert client.get("/sessions/nope/history").status_code == 404
        unknown = client.post(
            "/feedback", json={"session_id": "nope", "query_id": "q", "rating": 3}
        )
        assert unknown.status_code == 404
        replay = client.post("/sessions/nope/replay", json={"checkpoint_id": "x"})
        assert replay.status_code == 404


def test_two_concurrent_sessions_do_not_wait_or_mix(tmp_path: Path) -> None:
    # Each session's first turn waits in the model until the other's arrives: served one
    # after the other, the first would wait alone and the barrier would break.
    barrier = threading.Barrier(2)
    met: dict[str, bool] = {}

    def rendezvous(messages: list[BaseMessage]) -> AIMessage:
        said = str(messages[-1].content)
        if said.endswith("-0"):
            met[said] = meet(barrier)
        return reply(f"you said: {said}", thinking="echoing")

    model = ScriptedChatModel(replies=[rendezvous], repeat_last=True)
    agent = Agent(make_settings(tmp_path), chat_model=model, tools=[], memory=None, critic=None)

    def converse(api_url: str, session: str) -> list[str]:
        with httpx.Client(base_url=api_url, timeout=30) as client:
            return [
                client.post(
                    "/query", json={"query": f"{session}-{i}", "session_id": session}
                ).json()["answer"]
                for i in range(3)
            ]

    with Served(create_api(agent)) as url, ThreadPoolExecutor(2) as pool:
        a, b = pool.map(converse, [url, url], ["A", "B"])
    agent.close()
    assert a == [f"you said: A-{i}" for i in range(3)]
    assert b == [f"you said: B-{i}" for i in range(3)]
    assert met == {"A-0": True, "B-0": True}, "the sessions waited for each other"


def test_beyond_loopback_requires_a_token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert require_token("127.0.0.1") is None
    monkeypatch.delenv("LOCAL2_API_TOKEN", raising=False)
    with pytest.raises(RuntimeError, match="LOCAL2_API_TOKEN"):
        require_token("0.0.0.0")
    monkeypatch.setenv("LOCAL2_API_TOKEN", "s3cret")
    token = require_token("0.0.0.0")
    model = ScriptedChatModel(replies=[reply("ok")], repeat_last=True)
    agent = Agent(make_settings(tmp_path), chat_model=model, tools=[], memory=None, critic=None)
    with Served(create_api(agent, token=token, host="0.0.0.0")) as url:
        assert httpx.get(f"{url}/health").status_code == 401
        ok = httpx.get(f"{url}/health", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
    agent.close()


def test_sessions_are_listed_newest_first(api_url: str) -> None:
    """``GET /sessions``: the app's Resume list over HTTP (one person: every session)."""
    assert httpx.get(f"{api_url}/sessions", timeout=10).json() == []
    for session, question in (("older-1", "first question"), ("newer-2", "second question")):
        body = {"query": question, "session_id": session, "wait": "critique"}
        assert httpx.post(f"{api_url}/query", json=body, timeout=30).status_code == 200
    httpx.post(f"{api_url}/query", json={"query": "again", "session_id": "newer-2"}, timeout=30)
    listed = httpx.get(f"{api_url}/sessions", timeout=10).json()
    assert [(s["session_id"], s["turns"], s["first"]) for s in listed] == [
        ("newer-2", 2, "second question"),
        ("older-1", 1, "first question"),
    ]
    assert listed[0]["updated_at"] >= listed[1]["updated_at"]
    limited = httpx.get(f"{api_url}/sessions", params={"limit": 1}, timeout=10).json()
    assert [s["session_id"] for s in limited] == ["newer-2"]
