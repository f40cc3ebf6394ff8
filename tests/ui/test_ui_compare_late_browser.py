"""A compared turn in the app, in chromium, with a slow judge: both answers are side by side
as soon as they are out ("grading…", the judge at work, preferring held until it has
spoken), and the panel fills in by itself when the grades and the judge's verdict arrive,
also when they come after the turn's handler stopped following it (a grade that gave way
and was given later: ``late_grades.GradesToCome`` draws it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.service.agent import Agent
from local2_testkit.brains import HedgingBrain, ModelBrains
from local2_testkit.ollama_server import DEFAULT_MODELS, FakeOllama, RuleBrain
from tests.kit.browser import (
    BROWSER_MARKS,
    app_served,
    ask,
    make_agent,
    open_page,
    shot,
    text_of,
    wait_text,
)
from tests.people.helpers import (
    FRANCE,
    HELD_S,
    JUDGE_DELAY_S,
    WEAK,
    SlowJudge,
    asked_to_grade,
    graded,
    wait_for,
)

pytestmark = BROWSER_MARKS
JUDGING = "the judge is comparing"


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[str, Agent, FakeOllama]]:
    judge = SlowJudge(ModelBrains({WEAK: HedgingBrain()}, default=RuleBrain()))
    with FakeOllama(judge, models=[*DEFAULT_MODELS, WEAK]) as fake:
        agent = make_agent(tmp_path / "data", fake.url)
        with app_served(agent) as url:
            yield url, agent, fake
        agent.close()


def compare_with_weak(page: Any) -> None:
    page.check("#local2-compare input")
    page.fill("#local2-model-b input", WEAK)
    page.keyboard.press("Enter")


def test_the_pair_is_shown_at_its_answers_and_filled_in_when_judged(
    stack: tuple[str, Agent, FakeOllama], browser: Any
) -> None:
    url, _, fake = stack
    judge = fake.brain
    assert isinstance(judge, SlowJudge)
    page = open_page(browser, url)
    compare_with_weak(page)
    judge.open.clear()  # the judge's replies wait while the test looks at the pair
    try:
        ask(page, FRANCE)
        wait_text(page, "#local2-verdict", JUDGING)  # the answers are out, the judge at work
        assert not graded(fake, FRANCE, closed=False)  # shown before the judge replied
        assert "Paris" in text_of(page, "#local2-answer-a")
        assert "I don't know" in text_of(page, "#local2-answer-b")
        assert "grading…" in text_of(page, "#local2-answer-a")
        assert page.locator("#local2-prefer-b").is_disabled()  # until the judge has spoken
        shot(page, "compare-late-01-judging")
    finally:
        judge.open.set()
    wait_text(page, "#local2-verdict", "A is better", timeout=120_000)  # by itself
    wait_text(page, "#local2-answer-a", "Critic: 4/5")
    assert JUDGING not in text_of(page, "#local2-verdict")
    assert graded(fake, FRANCE, closed=False)  # the judge has replied
    assert page.locator("#local2-prefer-b").is_enabled()
    shot(page, "compare-late-02-judged")


def test_a_pair_judged_after_its_handler_stopped_is_filled_in_by_the_timer(
    stack: tuple[str, Agent, FakeOllama], browser: Any
) -> None:
    """The judge gives way while the pair is on screen (``make_way``: what the session's next
    turn asks first, here with no turn after it, so the pair stays the session's newest);
    the turn's handler then ends with the grade owed, and the grade, given once the session
    is quiet, reaches the panel through the timer alone."""
    url, agent, fake = stack
    judge = fake.brain
    assert isinstance(judge, SlowJudge)
    page = open_page(browser, url)
    compare_with_weak(page)
    judge.delay_s = HELD_S  # the first judging lasts until it gives way, however slow the test
    ask(page, FRANCE)
    wait_text(page, "#local2-verdict", JUDGING)
    session = text_of(page, "#local2-session code").strip()
    wait_for(lambda: asked_to_grade(fake, FRANCE), "the critic to ask the judge")
    judge.delay_s = JUDGE_DELAY_S  # the grade given later is not held
    agent.turns.running.make_way(session)
    wait_for(lambda: graded(fake, FRANCE, closed=True), "the judge's request closed")
    wait_text(page, "#local2-verdict", "A is better", timeout=120_000)
    wait_text(page, "#local2-answer-a", "Critic: 4/5")
    assert page.locator("#local2-prefer-b").is_enabled()
    shot(page, "compare-late-03-judged-later")
