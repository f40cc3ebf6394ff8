"""The person first in the app, in chromium: a quick second question is answered at once, and
the first answer's grade, which gave way to it, appears under that answer afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.browser import BROWSER_MARKS, app_served, ask, make_agent, open_page, shot, wait_text
from tests.people.helpers import FRANCE, GIL, SlowJudge, asked_to_grade, graded, wait_for

pytestmark = BROWSER_MARKS
CHAT = "#local2-chat"
GRADED = "Critic: 4/5"


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[str, Agent, FakeOllama]]:
    with FakeOllama(SlowJudge(RuleBrain()), chunk_delay_s=0.01) as fake:
        agent = make_agent(tmp_path / "data", fake.url)
        with app_served(agent) as url:
            yield url, agent, fake
        agent.close()


def chat_text(page: Any) -> str:
    return str(page.inner_text(CHAT))


def test_a_quick_second_question_answers_first_and_the_first_grade_follows(
    stack: tuple[str, Agent, FakeOllama], browser: Any
) -> None:
    url, _, fake = stack
    page = open_page(browser, url)
    ask(page, FRANCE)
    wait_text(page, CHAT, "Paris")
    wait_text(page, CHAT, "Critic: grading")
    wait_for(lambda: asked_to_grade(fake, FRANCE), "the critic to ask the judge")
    ask(page, GIL)  # while the first answer is being graded
    wait_text(page, CHAT, "Global Interpreter Lock")
    # The second answer is on screen while the first one's grade is still to come: its
    # grading gave way (the server saw the request closed), nothing was graded yet.
    assert graded(fake, FRANCE, closed=True) and not graded(fake, FRANCE, closed=False)
    assert GRADED not in chat_text(page)
    shot(page, "person-first-answered")
    # Then both grades appear, the first one under its own answer, before the second question.
    page.wait_for_function(
        "([sel, needle]) => (document.querySelector(sel)?.innerText || '')"
        ".split(needle).length - 1 >= 2",
        arg=[CHAT, GRADED],
        timeout=120_000,
    )
    text = chat_text(page)
    first_grade = text.index(GRADED)
    assert text.index("Paris") < first_grade < text.index(GIL)
    assert "Critic: grading" not in text
    shot(page, "person-first-graded")
    assert not page.locator(".toast-body").count(), page.inner_text("body")  # no error shown
