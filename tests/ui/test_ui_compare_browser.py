"""Comparing two models and retrying a low-graded answer, in a real browser (Debian's chromium
driven by Playwright) against the real server; the models are the Ollama-protocol test
server's ``qwen3:4b`` (answers) and ``hedge:1b`` (says it does not know), through ChatOllama.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.service.agent import Agent
from local2_testkit.brains import HedgingBrain, ModelBrains
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.browser import (
    BROWSER_MARKS,
    app_served,
    ask,
    make_agent,
    open_page,
    session_of,
    shot,
    table_rows,
    text_of,
    wait_text,
)
from tests.kit.served import Served

pytestmark = BROWSER_MARKS

STRONG, WEAK = "qwen3:4b", "hedge:1b"
CAPITAL = "What is the capital of France?"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    brains = ModelBrains({STRONG: RuleBrain(), WEAK: HedgingBrain()})
    with FakeOllama(brains, models=[STRONG, WEAK, "nomic-embed-text"]) as server:
        yield server


def served(tmp_path: Path, fake: FakeOllama, model: str) -> tuple[Agent, Served]:
    agent = make_agent(tmp_path, fake.url, model=model)
    return agent, app_served(agent)


def test_compare_then_pick_b_and_the_next_turn_continues_from_b(
    fake: FakeOllama,
    browser: Any,
    tmp_path: Path,
) -> None:
    agent, server = served(tmp_path, fake, STRONG)
    with server as url:
        page = open_page(browser, url)
        session = session_of(page)
        page.check("#local2-compare input")
        page.fill("#local2-model-b input", WEAK)
        page.keyboard.press("Enter")
        ask(page, CAPITAL)
        page.wait_for_selector("#local2-pair", state="visible")
        wait_text(page, "#local2-verdict", "Judge")
        wait_text(page, "#local2-answer-a", "Critic: 4/5")
        assert "Paris" in text_of(page, "#local2-answer-a")
        assert "I don't know" in text_of(page, "#local2-answer-b")
        assert "A is better" in text_of(page, "#local2-verdict")  # the judge's verdict
        shot(page, "compare-01-side-by-side")

        page.click("#local2-prefer-b")
        wait_text(page, "#local2-reward", "continues from B")
        wait_text(page, "#local2-chat", "I don't know")  # the chat shows B's answer now
        assert "You: B is better" in text_of(page, "#local2-verdict")
        shot(page, "compare-02-picked-b")

        page.uncheck("#local2-compare input")
        ask(page, "Tell me about the Python GIL.")
        wait_text(page, "#local2-chat", "Global Interpreter Lock")
        page.wait_for_selector("#local2-rate-1:not([disabled])")
        turns = agent.sessions.history(session)
        assert turns[0]["assistant"].startswith("I don't know")
        seen = next(
            r["messages"]
            for r in reversed(fake.chat_requests)
            if r["model"] == STRONG
            and r["messages"][-1].get("content") == "Tell me about the Python GIL."
        )
        assert [m["content"] for m in seen if m["role"] == "assistant"] == [turns[0]["assistant"]]

        page.click("button[role=tab]:has-text('Arena')")
        wait_text(page, "#arena-summary", "1 vote(s) from people")
        people = table_rows(page, "#arena-people")
        assert [row[0] for row in people] == [WEAK, STRONG]
        judge = table_rows(page, "#arena-judge")
        assert [row[0] for row in judge] == [STRONG, WEAK]
        shot(page, "compare-03-arena")
        page.context.close()
    # The downloads are the person's, under the data directory, readable by the server alone.
    downloads = Path(agent.settings.data_dir) / "downloads"
    (csv_file,) = downloads.glob("*/arena.csv")
    assert WEAK in csv_file.read_text() and (csv_file.parent / "arena.json").exists()
    for path, mode in ((downloads, 0o700), (csv_file.parent, 0o700), (csv_file, 0o600)):
        assert stat.S_IMODE(path.stat().st_mode) == mode, path
    agent.close()


def test_a_low_grade_offers_a_retry_that_is_graded_again_and_switchable(
    fake: FakeOllama,
    browser: Any,
    tmp_path: Path,
) -> None:
    agent, server = served(tmp_path, fake, WEAK)
    with server as url:
        page = open_page(browser, url)
        session = session_of(page)
        ask(page, CAPITAL)
        page.wait_for_selector("#local2-retry-box", state="visible")
        wait_text(page, "#local2-retry-note", "graded this answer 1/5")
        shot(page, "retry-01-offered")
        page.click("#local2-retry")
        wait_text(page, "#local2-retry-note", "Two attempts")
        note = text_of(page, "#local2-retry-note")
        assert "first graded 1/5, this one 4/5" in note and "attempt 2" in note
        wait_text(page, "#local2-chat", "Paris")
        assert agent.sessions.history(session)[-1]["assistant"] == "The capital of France is Paris."
        shot(page, "retry-02-second-attempt")

        page.click("#local2-show-1")
        wait_text(page, "#local2-reward", "continues from attempt 1")
        assert agent.sessions.history(session)[-1]["assistant"].startswith("I don't know")
        page.context.close()
    agent.close()
