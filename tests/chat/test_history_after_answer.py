"""A turn's answer never reaches the person before the checkpoint that records it.

``POST /query`` hands the answer out as soon as ``publish`` has run; a client that reads the
session's history at once (a script, the other process behind a load balancer) must find
the turn there. Before, with LangGraph's default ``durability="async"``, that read missed it
in 9-22 % of reads on SQLite and 55-85 % on Postgres, and a new session's answered 404.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from local2.http._app import create_api
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from tests.kit.helpers import make_settings
from tests.kit.served import Served

TURNS = 30


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_the_history_read_at_once_holds_the_turn_just_answered(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    system = {}
    if store == "postgres":
        system = {
            "checkpointer": "postgres",
            "postgres_url": request.getfixturevalue("postgres_url"),
        }
    model = ScriptedChatModel(replies=[reply("noted")], repeat_last=True)
    settings = make_settings(tmp_path, system=system)
    agent = Agent(settings, chat_model=model, tools=[], memory=None, critic=None)
    missed: list[str] = []
    with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=30) as client:
        for n in range(TURNS):
            session = "kept" if n % 2 else f"new-{n}"  # a new session, then one growing
            answered = client.post("/query", json={"query": f"turn {n}", "session_id": session})
            assert answered.status_code == 200, answered.text
            read = client.get(f"/sessions/{session}/history")
            users = [t["user"] for t in read.json()["turns"]] if read.status_code == 200 else []
            if f"turn {n}" not in users:
                missed.append(f"turn {n} in {session}: {read.status_code} {users[-2:]}")
    agent.close()
    assert missed == [], f"{len(missed)} of {TURNS} reads missed the turn just answered: {missed}"
