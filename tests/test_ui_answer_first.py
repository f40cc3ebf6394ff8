"""In the app, the answer shows before the critic's grade: chromium against the real server,
with a judge that takes ``CRITIC_DELAY_S`` to grade."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.testing.ollama_server import FakeOllama
from local2.ui.server import create_app
from tests.test_answer_first import CRITIC_DELAY_S, SlowJudge
from tests.test_api import Served
from tests.test_ui_browser import (  # the browser fixture and page helpers
    CHROMIUM,
    ask,
    browser,  # noqa: F401
    make_agent,
    open_page,
    shot,
    text_of,
    wait_text,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium"),
]


@pytest.fixture
def slow_judge_url(tmp_path: Path) -> Iterator[str]:
    with FakeOllama(SlowJudge()) as fake:
        agent = make_agent(tmp_path, fake.url)
        with Served(create_app(agent)) as url:
            yield url
        agent.close()


def test_the_grade_arrives_after_the_answer(slow_judge_url: str, browser: Any) -> None:  # noqa: F811
    page = open_page(browser, slow_judge_url)
    ask(page, "What is the capital of France?")
    started = time.monotonic()
    wait_text(page, "#local2-chat", "grading")  # published: the critic is at work
    answered = time.monotonic() - started
    chat = text_of(page, "#local2-chat")
    assert "The capital of France is Paris." in chat and "4/5" not in chat
    shot(page, "08-answer-before-grade")
    wait_text(page, "#local2-chat", "Critic: 4/5")
    graded = time.monotonic() - started
    wait_text(page, "#local2-critic", "Critic: 4/5")
    assert graded - answered >= CRITIC_DELAY_S * 0.8, (answered, graded)
    page.context.close()
