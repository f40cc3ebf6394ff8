"""Stop pressed while a research run is paused (its plan under review, or its clarifying
question) ends it as Stop ends a running run, through the real parts: ChatOllama against
the Ollama-protocol server, the loopback web (its request log), the research graph's SQLite
checkpointer.

The run leaves its pause, writes its report from what was read (here nothing, and the
report says so), says it stopped and why, and can no longer be resumed into a search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from local2.errors import InvalidInput, RunNotReady
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain, default_plan
from local2_testkit.research_web import LoopbackWeb
from tests.research.helpers import (
    BRIDGE,
    MILL,
    OTTERS,
    QUESTION,
    branches,
    paused,
    plan_requests,
    research,
    steer_at_first_step,
)

STOPPED_WHY = "the person stopped the run"
NOTHING_READ = "the person stopped the run before anything was searched or read"


def assert_stopped_before_reading(payload: dict[str, Any]) -> None:
    """Stopped, with its reason, and a report that says plainly it read nothing."""
    assert payload["status"] == "stopped", payload["status"]
    assert payload["stopped"] == STOPPED_WHY
    assert payload["awaiting"] is None
    assert NOTHING_READ in payload["report"]
    assert payload["sources"] == [] and payload["ledger_size"] == 0
    assert payload["rounds"][-1]["stop"] == STOPPED_WHY


def test_stop_on_a_plan_under_review_writes_the_report_and_the_run_cannot_go_on(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    with FakeOllama(ResearchBrain(plans=[branches(BRIDGE, OTTERS)])) as fake:
        run = research(fake, web, tmp_path, max_rounds=2)
        run_id = paused(list(run.stream(QUESTION, review=True)))["run_id"]
        with pytest.raises(InvalidInput, match="send exactly one of"):
            list(run.input(run_id, {"stop": True, "approve": True}))
        with pytest.raises(InvalidInput, match="stop must be true"):
            list(run.input(run_id, {"stop": False}))
        items = list(run.input(run_id, {"stop": True}))
        payload = items[-1][1]
        stored = run.payload(run_id)
        listed = run.runs(5)[0]
        # It can no longer be resumed into a search, nor answered.
        again = list(run.resume(run_id))
        with pytest.raises(RunNotReady, match="it waits for no input"):
            list(run.input(run_id, {"approve": True}))
        run.close()
    assert [k for k, _ in items][-1] == "final" and "awaiting_input" not in [k for k, _ in items]
    assert_stopped_before_reading(payload)
    assert stored["status"] == "stopped" and stored["stopped"] == STOPPED_WHY
    assert stored["report"] == payload["report"]
    assert listed["run_id"] == run_id and listed["status"] == "stopped"
    assert [k for k, _ in again] == ["run", "final"] and again[-1][1]["status"] == "stopped"
    assert web.hits == []  # nothing searched or read, before the stop or after
    # The plan's steps stay on the checklist, each left out with the reason.
    steps = {s["id"]: s for s in payload["steps"] if s["tool"] != "compose"}
    assert set(steps) == {"s1", "s2", "s3", "s4"}
    assert {(s["status"], s["error"]) for s in steps.values()} == {("skipped", STOPPED_WHY)}
    stopped = [e for e in payload["event_log"] if e["subject"] == "research.input"]
    assert stopped and stopped[-1]["waits_for"] == "plan" and stopped[-1]["stopped"] is True
    assert len(plan_requests(fake)) == 1 and "ResearchGaps" not in str(fake.chat_requests)
    assert "You write a research report" not in str(fake.chat_requests)  # nothing to write from


def test_stop_said_to_a_paused_run_through_its_inbox_and_straight_through_the_graph(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    """``steer({stop: "run"})``, the Stop of a running run, ends a run paused on its
    clarifying question too; and LangGraph Server's resume ``{stop: true}`` ends one."""
    asking = {
        **default_plan("Kelsby bridge"),
        "clarify": {"question": "Which Kelsby bridge?", "readings": ["swing", "rail"]},
    }
    with FakeOllama(ResearchBrain(plans=[asking, asking])) as fake:
        run = research(fake, web, tmp_path, max_rounds=1)
        first = paused(list(run.stream("Tell me about the Kelsby bridge", clarify="auto")))
        assert first["waits_for"] == "answer"
        with pytest.raises(RunNotReady, match="a say reaches only a running run"):
            run.steer(first["run_id"], {"stop": "q1"})  # a pause is stopped whole, or answered
        said = run.steer(first["run_id"], {"stop": "run"})
        by_say = run.payload(first["run_id"])
        second = paused(list(run.stream("Tell me about the Kelsby bridge", clarify="auto")))
        config = {"configurable": {"thread_id": second["run_id"]}}
        run.graph.invoke(Command(resume={"stop": True}), config, context=run.context)
        by_graph = run.payload(second["run_id"])
        run.close()
    assert said["kind"] == "stop" and said["value"] == "run"
    for payload in (by_say, by_graph):
        assert_stopped_before_reading(payload)
        assert payload["clarification"] is None  # the question was never answered
        assert [p["origin"] for p in payload["plan"]] == ["clarify"]  # not planned again
    steered = [e for e in by_say["event_log"] if e["subject"] == "research.steer"]
    assert [e["value"] for e in steered] == ["run"]
    assert web.hits == [] and len(plan_requests(fake)) == 2  # one plan per run, no more


def test_a_follow_up_on_a_run_stopped_at_its_pause_searches_and_takes_says(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    """The stop ended the run, not its follow-ups: one searches what the ledger lacks, a
    say to it still adds a sub-question, and the run still says it was stopped."""
    web.search_delay_s = 0.5  # the follow-up's search is still running when the say arrives
    brain = ResearchBrain(plans=[branches(BRIDGE)], missing=[["sourdough starter"]])
    with FakeOllama(brain) as fake:
        run = research(fake, web, tmp_path, max_rounds=1, max_parallel=1)
        run_id = paused(list(run.stream(QUESTION, review=True)))["run_id"]
        list(run.input(run_id, {"stop": True}))
        asked = run.followup(run_id, "What temperature suits a starter?")
        payload = steer_at_first_step(run, asked, [{"add": MILL}])
        run.close()
    assert payload["status"] == "stopped" and payload["stopped"] == STOPPED_WHY
    steered = [e for e in payload["event_log"] if e["subject"] == "research.steer"]
    assert [e["kind"] for e in steered] == ["add"] and steered[0]["effect"].startswith("added")
    assert web.searches() == ["sourdough starter", MILL]
