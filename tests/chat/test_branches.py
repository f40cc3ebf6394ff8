"""Branches, replays and ratings through the Python API, on the real SQLite checkpointer.

A replayed turn has its own clock; a turn can continue an earlier branch; a session's turns
come back with everything needed to show them again; one rating of an answer is one record.
"""

from __future__ import annotations

import time
from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage

from local2 import events
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from tests.kit.helpers import make_settings

THINK_S = 0.4


def slow_echo(messages: list[BaseMessage]) -> AIMessage:
    time.sleep(THINK_S)
    return reply(f"you said: {messages[-1].content}", thinking="echoing")


def make_agent(tmp_path: Path, critic: object = None) -> Agent:
    model = ScriptedChatModel(replies=[slow_echo], repeat_last=True)
    return Agent(make_settings(tmp_path), chat_model=model, tools=[], memory=None, critic=critic)


def test_a_replayed_turn_has_its_own_clock_and_streams(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    try:
        agent.turns.ask("first", "s")
        mid = next(r for r in agent.sessions.checkpoints("s") if r["next"] == ["generate"])
        time.sleep(1.0)  # the replay starts well after the original question
        started = time.monotonic()
        kinds, payload = [], {}
        for kind, data in agent.timetravel.replay_stream("s", mid["checkpoint_id"]):
            kinds.append(kind)
            if kind == "final":
                payload = data
        took = time.monotonic() - started
        assert kinds[0] == "event" and "token" in kinds and kinds[-1] == "final"
        log = payload["event_log"]
        assert log[0]["subject"] == events.REPLAY_STARTED and log[0]["t"] == 0.0
        assert log[0]["from_checkpoint"] == mid["checkpoint_id"]
        times = [e["t"] for e in log]
        assert times == sorted(times) and max(times) <= took  # counted from the replay's start
        assert events.RESPONSE_GENERATION in payload["events"]
        assert payload["answer"] == "you said: first" and payload["replayed_from"]
        # The clock restart is a checkpoint of the new branch, not of the original.
        rows = {r["checkpoint_id"]: r for r in agent.sessions.checkpoints("s", 100)}
        assert all(rows[c]["current"] for c in payload["branch"])
        assert mid["checkpoint_id"] not in payload["branch"]
    finally:
        agent.close()


def test_a_turn_can_continue_an_earlier_branch(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    try:
        for question in ("one", "two"):
            agent.turns.ask(question, "s")
        end_of_one = next(
            r
            for r in agent.sessions.checkpoints("s")
            if r["next"] == [] and "said: one" in r["summary"]
        )
        # Asked on the branch that ended after "one": "two" is not in its history.
        payload = {}
        for kind, data in agent.turns.stream(
            "three", "s", checkpoint_id=end_of_one["checkpoint_id"]
        ):
            if kind == "final":
                payload = data
        assert payload["answer"] == "you said: three"
        assert [t["user"] for t in agent.sessions.history("s")] == ["one", "three"]
        old = next(r for r in agent.sessions.checkpoints("s", 100) if "said: two" in r["summary"])
        assert not old["current"] and not old["abandoned"]
        assert [
            t["user"] for t in agent.sessions.history("s", checkpoint_id=old["checkpoint_id"])
        ] == [
            "one",
            "two",
        ]
    finally:
        agent.close()


class FixedCritic:
    def grade(self, query: str, answer: str, tool_calls: list, lookup: object, **_: object) -> dict:
        return {"score": 4, "feedback": f"graded {query}", "flags": []}


def test_history_in_detail_has_what_each_turn_showed_and_one_rating_is_one_record(
    tmp_path: Path,
) -> None:
    agent = make_agent(tmp_path, critic=FixedCritic())
    try:
        first = agent.turns.ask("one", "s")
        agent.turns.ask("two", "s")
        turns = agent.sessions.history("s", detail=True)
        assert [t["critique"]["feedback"] for t in turns] == ["graded one", "graded two"]
        assert turns[0]["record"]["thinking"] == "echoing"
        assert turns[0]["record"]["event_log"][0]["subject"] == events.QUERY_RECEIVED

        qid = first["query_id"]
        recorded = agent.ratings.feedback("s", qid, 4)
        again = agent.ratings.feedback("s", qid, 4)
        assert recorded["events"] and again["unchanged"] and not again["events"]
        changed = agent.ratings.feedback("s", qid, 2)
        assert changed["previous"] == 4
        log = agent.sessions.state("s")["event_log"]
        given = [e for e in log if e["subject"] == events.USER_FEEDBACK]
        assert [(e["rating"], e["replaces"]) for e in given] == [(4, None), (2, 4)]
        assert [e["subject"] for e in log].count(events.REWARD_EVENT) == 2
        assert agent.sessions.history("s", detail=True)[0]["rating"]["rating"] == 2
        assert agent.sessions.history("s")[0]["reward"]["rating"] == 2
    finally:
        agent.close()
