"""The API's side of approvals, over a real socket: a paused turn answers
``status: awaiting_approval`` and ``POST /sessions/{id}/approval`` goes on with it."""

from __future__ import annotations

from pathlib import Path

import httpx

from local2.http._app import create_api
from local2.models._scripted import ScriptedChatModel
from local2.service.agent import Agent
from tests.chat.helpers import Notes, obeying_script, page_tool
from tests.kit.helpers import make_settings
from tests.kit.served import Served


def test_a_paused_turn_over_http(tmp_path: Path) -> None:
    notes = Notes()
    model = ScriptedChatModel(replies=obeying_script(), repeat_last=True)
    agent = Agent(
        make_settings(tmp_path),
        chat_model=model,
        tools=[page_tool(), notes.tool()],
        memory=None,
        critic=None,
    )
    with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=30) as client:
        assert client.get("/sessions/s1/approval").json() == {"session_id": "s1", "pending": None}
        paused = client.post("/query", json={"query": "Summarise it", "session_id": "s1"})
        assert paused.status_code == 200
        body = paused.json()
        assert body["status"] == "awaiting_approval"
        assert body["approval"]["resume"] == "/sessions/s1/approval"
        [call] = body["approval"]["calls"]
        assert call["tool"] == "note" and call["after"]["tool"] == "page"

        pending = client.get("/sessions/s1/approval").json()["pending"]
        assert pending["calls"] == [call]
        busy = client.post("/query", json={"query": "And now?", "session_id": "s1"})
        assert busy.status_code == 409
        assert busy.json()["detail"]["resume"] == "/sessions/s1/approval"

        for bad in ({}, {"approve": True, "decisions": {}}, {"approve": "maybe"}):
            assert client.post("/sessions/s1/approval", json=bad).status_code == 422
        unknown = client.post("/sessions/s1/approval", json={"decisions": {"x": True}})
        assert unknown.status_code == 422 and "No call 'x'" in unknown.json()["detail"]
        assert client.post("/sessions/bad%20id/approval", json={"approve": True}).status_code == 422
        assert notes.written == []

        done = client.post("/sessions/s1/approval", json={"approve": False})
        assert done.status_code == 200
        assert done.json()["status"] == "done" and "1932" in done.json()["answer"]
        assert done.json()["tool_calls"][-1]["error"] == "denied by the person"
        assert notes.written == []
        again = client.post("/sessions/s1/approval", json={"approve": True})
        assert again.status_code == 404
        assert client.post("/query", json={"query": "And now?", "session_id": "s1"}).is_success
    agent.close()
