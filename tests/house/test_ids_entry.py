"""The session-id rule at every entry other than the HTTP API (``test_answer_first.py``):
the command line, the agent, the graph itself and the app; messages keep their quotes; and
each request applies the rule to its id once."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage

from local2 import ids
from local2.errors import InvalidId
from local2.ids import SESSION_ID_RULE
from local2.models._scripted import ScriptedChatModel
from local2.service.agent import Agent
from local2.service.wiring import build_graph
from tests.kit.helpers import local2, make_settings

BAD = ["team/alice", "../../x", "..", "a b"]


def scripted_agent(tmp_path: Path) -> Agent:
    model = ScriptedChatModel(replies=[AIMessage("ok")], repeat_last=True)
    return Agent(make_settings(tmp_path), chat_model=model, tools=[], memory=None, critic=None)


def test_cli_refuses_bad_ids_before_starting_anything(tmp_path: Path) -> None:
    env = {"LOCAL2_HOME": str(tmp_path / "home")}
    for args in (
        ("ask", "-s", "team/alice", "hello"),
        ("history", "../../x"),
        ("feedback", "a b", "q1", "--rating", "3"),
        ("replay", "..", "--checkpoint", "c1"),
        ("research", "--resume", "../../x"),  # run ids follow the same rule
    ):
        done = local2(*args, env=env)
        assert done.returncode == 2, (args, done.stderr)
        flat = " ".join(done.stderr.replace("│", " ").split())
        assert SESSION_ID_RULE in flat and "Traceback" not in done.stderr, (args, done.stderr)
    assert not (tmp_path / "home").exists()  # nothing was created for a refused id


def test_cli_messages_keep_their_closing_quote(tmp_path: Path) -> None:
    env = {"LOCAL2_HOME": str(tmp_path / "home")}
    missing = local2("history", "nosuchsession", env=env)
    assert missing.returncode == 3
    assert "No session 'nosuchsession'" in missing.stderr
    rated = local2("feedback", "nope", "q1", "--rating", "3", env=env)
    assert "No session 'nope'" in rated.stderr


@pytest.mark.parametrize("bad", BAD)
def test_agent_refuses_bad_ids_at_every_method(tmp_path: Path, bad: str) -> None:
    agent = scripted_agent(tmp_path)
    try:
        for call in (
            lambda: agent.turns.stream("hi", bad),
            lambda: agent.turns.start("hi", bad),
            lambda: agent.turns.ask("hi", bad),
            lambda: agent.sessions.history(bad),
            lambda: agent.sessions.checkpoints(bad),
            lambda: agent.sessions.state(bad),
            lambda: agent.sessions.exists(bad),
            lambda: agent.ratings.feedback(bad, "q", 3),
            lambda: agent.timetravel.replay(bad, "c"),
        ):
            with pytest.raises(InvalidId, match="use 1-128 characters"):
                call()
        assert agent.sessions.recent() == []
    finally:
        agent.close()


def test_the_graph_invoked_directly_rejects_a_bad_thread_id(tmp_path: Path) -> None:
    model = ScriptedChatModel(replies=[AIMessage("ok")], repeat_last=True)
    graph = build_graph(make_settings(tmp_path), chat_model=model, tools=[], memory=None)
    state = graph.invoke({"query": "hi"}, {"configurable": {"thread_id": "team/alice"}})
    assert SESSION_ID_RULE in state["error"] and not state.get("answer")
    assert state["event_log"][-1]["subject"] == "query.rejected"
    good = graph.invoke({"query": "hi"}, {"configurable": {"thread_id": "team-alice"}})
    assert good["answer"] == "ok"


def test_the_app_refuses_a_pasted_bad_id_with_the_rule(tmp_path: Path) -> None:
    from local2.ui._app import LocalUI

    agent = scripted_agent(tmp_path)
    try:
        ui = LocalUI(agent)
        ui.build()
        resumed = ui.chat_tab.sessions.resume_session("../../x")
        assert SESSION_ID_RULE in resumed[ui.header.banner]["value"]
        travel = ui.time_travel
        loaded = travel.load_checkpoints("team/alice")
        assert SESSION_ID_RULE in loaded[travel.tt_status]
        assert loaded[travel.tt_turns]["data"] == []
        assert SESSION_ID_RULE in travel.details.show_checkpoint("a b", "c1")[travel.tt_status]
        assert SESSION_ID_RULE in travel.show_turn("a b", "c1")[travel.tt_status]
    finally:
        agent.close()


# -- the rule is applied once per request ---------------------------------------------------


@pytest.fixture
def rule_applied(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every value the session-id rule is applied to in this process, wherever from (every
    check goes through ``ids.follows_rule``; a ``CheckedId`` is never checked again)."""
    applied: list[object] = []
    rule = ids.follows_rule

    def counted(value: object) -> bool:
        applied.append(value)
        return rule(value)

    monkeypatch.setattr(ids, "follows_rule", counted)
    return applied


def slow_echo(messages: list[Any]) -> AIMessage:
    time.sleep(0.3)
    return AIMessage(f"you said: {messages[-1].content}")


def test_each_request_checks_its_session_id_once(
    tmp_path: Path, rule_applied: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``POST /query`` (also one that waits for the session's running turn), ``GET
    /sessions/{id}/history``, the app's resume and ``local2 history`` each apply the rule to
    the pasted id once, whatever they read afterwards (the turn's graph and its audit record
    included)."""
    from typer.testing import CliRunner

    from local2.cli._main import app as cli
    from local2.http._app import create_api
    from local2.ui._app import LocalUI
    from tests.kit.served import Served

    model = ScriptedChatModel(replies=[slow_echo], repeat_last=True)
    settings = make_settings(tmp_path)
    agent = Agent(settings, chat_model=model, tools=[], memory=None, critic=None)
    try:
        with Served(create_api(agent)) as url, httpx.Client(base_url=url, timeout=30) as client:
            rule_applied.clear()
            first = client.post("/query", json={"query": "hello", "session_id": "s-1"})
            assert first.status_code == 200 and agent.turns.wait_idle(30)
            assert rule_applied == ["s-1"]

            rule_applied.clear()
            with ThreadPoolExecutor(1) as pool:  # the second waits for the first's turn
                running = pool.submit(
                    client.post, "/query", json={"query": "one", "session_id": "s-1"}
                )
                while not agent.turns.is_running("s-1") and not running.done():
                    time.sleep(0.01)
                second = client.post("/query", json={"query": "two", "session_id": "s-1"})
                assert running.result().status_code == second.status_code == 200
            assert agent.turns.wait_idle(30)
            assert rule_applied == ["s-1", "s-1"]

            rule_applied.clear()
            history = client.get("/sessions/s-1/history").json()
            assert len(history["turns"]) == 3 and history["checkpoints"]
            assert rule_applied == ["s-1"]

        rule_applied.clear()
        ui = LocalUI(agent)
        ui.build()
        resumed = ui.chat_tab.sessions.resume_session(" s-1 ")
        assert resumed[ui.chat_tab.conversation.chatbot]  # the session's turns are shown
        assert rule_applied == ["s-1"]
    finally:
        agent.close()

    monkeypatch.setenv("LOCAL2_HOME", str(tmp_path / "data"))  # the command's store is this one
    rule_applied.clear()
    listed = CliRunner().invoke(cli, ["history", "s-1", "--json"])
    assert listed.exit_code == 0, listed.output
    assert rule_applied == ["s-1"]


def test_an_app_turn_checks_its_session_id_once(tmp_path: Path, rule_applied: list[object]) -> None:
    """One question in the app (the session id comes back from the browser as text): the rule
    is applied once, though the turn, its panels and its history all read the session."""
    from local2.ui._app import LocalUI

    agent = scripted_agent(tmp_path)
    try:
        ui = LocalUI(agent)
        ui.build()
        rule_applied.clear()
        updates = list(ui.chat_tab.chat.respond("hello", "s-app", [], {}, []))
        assert agent.turns.wait_idle(30)
        assert "ok" in str(updates[-1][ui.chat_tab.conversation.chatbot])  # answered
        assert rule_applied == ["s-app"]

        rule_applied.clear()
        refused = list(ui.chat_tab.chat.respond("hello", "a b", [], {}, []))
        assert SESSION_ID_RULE in str(refused[-1][ui.header.banner])  # a bad id: the rule, once
        assert rule_applied == ["a b"]
    finally:
        agent.close()


def test_a_chat_turn_checks_its_session_id_once(
    tmp_path: Path, rule_applied: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``local2 chat --session s-chat``, one question: the id is checked once, where the
    command line takes it, and the turn and its session trust it from there."""
    from typer.testing import CliRunner

    import local2.service as service
    from local2.cli._main import app as cli

    agent = scripted_agent(tmp_path)
    monkeypatch.setattr(service, "warming_agent", lambda *_: agent)  # the scripted model
    monkeypatch.setenv("LOCAL2_HOME", str(tmp_path / "data"))
    try:
        rule_applied.clear()
        chatted = CliRunner().invoke(cli, ["chat", "--session", "s-chat"], input="hello\n/exit\n")
        assert chatted.exit_code == 0, chatted.output
        assert agent.turns.wait_idle(30)
        assert rule_applied == ["s-chat"]
    finally:
        agent.close()  # (chat closes it too)
    reader = scripted_agent(tmp_path)
    try:
        assert [t["assistant"] for t in reader.sessions.history("s-chat")] == ["ok"]
    finally:
        reader.close()
