"""The session-id rule at every entry other than the HTTP API (``test_answer_first.py``):
the command line, the agent, the graph itself and the app; and messages keep their quotes."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from local2.errors import InvalidId
from local2.ids import SESSION_ID_RULE
from local2.models.scripted import ScriptedChatModel
from local2.service.agent import Agent
from local2.service.wiring import build_graph
from tests.conftest import local2, make_settings

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
            lambda: agent.stream("hi", bad),
            lambda: agent.start("hi", bad),
            lambda: agent.ask("hi", bad),
            lambda: agent.history(bad),
            lambda: agent.checkpoints(bad),
            lambda: agent.state(bad),
            lambda: agent.exists(bad),
            lambda: agent.feedback(bad, "q", 3),
            lambda: agent.replay(bad, "c"),
        ):
            with pytest.raises(InvalidId, match="use 1-128 characters"):
                call()
        assert agent.sessions() == []
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
    from local2.ui.app import LocalUI

    agent = scripted_agent(tmp_path)
    try:
        ui = LocalUI(agent)
        ui.build()
        resumed = ui.resume_session("../../x")
        assert SESSION_ID_RULE in resumed[ui.banner]["value"]
        table, _, status = ui.load_checkpoints("team/alice")
        assert SESSION_ID_RULE in status and table["data"] == []
        assert SESSION_ID_RULE in ui.show_checkpoint("a b", "c1")[3]
    finally:
        agent.close()
