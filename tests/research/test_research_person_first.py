"""The person first, for research: a run's critic gives way to the person's next question
(a chat turn, a follow-up on the run), as the chat critic does, and grades it later.

Real parts: ``ChatOllama`` against the Ollama-protocol test server, the searxng provider and
web_fetch against the loopback web, the SQLite checkpointer, the real critic. The judge is
slow (its replies wait before their first byte), so the question asked while it grades is
a fact the test waits for, never a timing it assumes."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages
from tests.people.helpers import SlowJudge, asked_to_grade, graded, wait_for
from tests.research.helpers import CORPUS, research_agent

QUESTION = "Why did Kelsby keep its bridge?"
SLOW_S = 6.0


def start_run(agent: Agent) -> tuple[threading.Thread, list[tuple[str, Any]]]:
    items: list[tuple[str, Any]] = []

    def run() -> None:
        items.extend(agent.research.stream(QUESTION, max_rounds=1))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, items


def subjects(payload: dict[str, Any]) -> list[str]:
    return [e["subject"] for e in payload["event_log"]]


def test_a_chat_question_makes_the_research_critic_give_way(tmp_path: Path) -> None:
    judge = SlowJudge(ResearchBrain())
    judge.delay_s = SLOW_S
    with FakeOllama(judge) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        agent = research_agent(fake, web, tmp_path)
        thread, items = start_run(agent)
        wait_for(lambda: asked_to_grade(fake, QUESTION), "the research critic to ask")
        asked = time.monotonic()
        agent.turns.start("What is the capital of France?").until_answer()
        thread.join(timeout=SLOW_S - 1)
        assert not thread.is_alive()  # it ended without waiting for its grade
        assert time.monotonic() - asked < SLOW_S
        wait_for(lambda: graded(fake, QUESTION, closed=True), "the grading request closed")
        final = items[-1][1]
        assert final["status"] == "done" and final["critique"] is None
        assert "critique.deferred" in subjects(final)
        run_id = final["run_id"]
        # Graded later, once nothing runs: the grade is kept on the run.
        later = wait_for(
            lambda: (p := agent.research.payload(run_id))["critique"] and p, "the late grade"
        )
        assert later["critique"]["score"] is not None
        assert subjects(later).count("critique.result") == 1
        agent.close()


def test_a_follow_up_on_the_run_makes_its_critic_give_way(tmp_path: Path) -> None:
    judge = SlowJudge(ResearchBrain())
    judge.delay_s = SLOW_S
    with FakeOllama(judge) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        agent = research_agent(fake, web, tmp_path)
        thread, items = start_run(agent)
        wait_for(lambda: asked_to_grade(fake, QUESTION), "the research critic to ask")
        run_id = items[0][1]["run_id"]
        asked = time.monotonic()
        answered = list(agent.research.followup(run_id, "Why was there a vote?"))
        assert time.monotonic() - asked < SLOW_S
        assert any(kind == "followup" for kind, _ in answered)
        thread.join(timeout=5)
        assert "critique.deferred" in subjects(items[-1][1])
        assert graded(fake, QUESTION, closed=True)
        agent.close()
