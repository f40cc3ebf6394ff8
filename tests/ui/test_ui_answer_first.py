"""In the app, the answer shows before the critic's grade: chromium against the real server,
with a judge that takes ``CRITIC_DELAY_S`` to grade."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2_testkit.ollama_server import FakeOllama
from tests.chat.helpers import SlowJudge
from tests.kit.browser import (
    CHROMIUM,
    app_served,
    ask,
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


def judged(fake: FakeOllama) -> list[float]:
    """When each grading reply of the judge ended (``time.perf_counter()``)."""
    return [
        s.ended
        for s in list(fake.served)
        if any(
            "###Response to evaluate" in str(m.get("content")) for m in s.body.get("messages") or []
        )
    ]


@pytest.fixture
def slow_judge(tmp_path: Path) -> Iterator[tuple[str, FakeOllama]]:
    with FakeOllama(SlowJudge()) as fake:
        agent = make_agent(tmp_path, fake.url)
        with app_served(agent) as url:
            yield url, fake
        agent.close()


def test_the_grade_arrives_after_the_answer(
    slow_judge: tuple[str, FakeOllama],
    browser: Any,
) -> None:
    url, fake = slow_judge
    page = open_page(browser, url)
    ask(page, "What is the capital of France?")
    wait_text(page, "#local2-chat", "grading")  # published: the critic is at work
    shown = time.perf_counter()
    chat = text_of(page, "#local2-chat")
    assert "The capital of France is Paris." in chat and "4/5" not in chat
    # The answer is on screen while the judge (CRITIC_DELAY_S a reply) has not replied yet:
    # the server's clock, not the browser's polling, says the answer did not wait for it.
    assert judged(fake) == [], "the judge had already replied when the answer showed"
    shot(page, "08-answer-before-grade")
    wait_text(page, "#local2-chat", "Critic: 4/5")
    graded = time.perf_counter()
    wait_text(page, "#local2-critic", "Critic: 4/5")
    replies = judged(fake)
    assert replies and shown < min(replies) <= graded, (shown, replies, graded)
    page.context.close()
