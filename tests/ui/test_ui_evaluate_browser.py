"""The Evaluate tab in a real browser: Debian's chromium driven by Playwright, against the real
server (the app and the API), the Ollama-protocol server answering as the eval stand-in.

Runs of the demo set by two models (and one in research mode) are charted with their 95 %
intervals; a run started in the tab shows a progress bar with the time left, and Stop stops
one; clicking a question opens its session in the Time travel tab. Screenshots go to the
run's temp folder; docs/evals.md's chart is taken by ``docs/images/take_screenshots.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from local2.evals import DEMO_PATH, load_set
from local2_testkit.eval_brain import ABSTAIN, EvalBrain
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from tests.kit.browser import (
    BROWSER_MARKS,
    Stack,
    app_served,
    make_agent,
    shot,
    table_rows,
    text_of,
    wait_text,
)
from tests.kit.helpers import screenshot_path

QUESTIONS = load_set(DEMO_PATH).questions

pytestmark = BROWSER_MARKS


def answers(right: int, count: int = 12) -> dict[str, str]:
    """The first ``right`` questions answered correctly, one in three of the rest abstained."""
    said = {}
    for i, q in enumerate(QUESTIONS[:count]):
        if i < right:
            said[q.question] = f"It is {q.answers[0]}."
        else:
            said[q.question] = ABSTAIN if i % 3 == 0 else "It is Penhallow Quay."
    return said


def finish(items: Iterator[tuple[str, Any]]) -> str:
    run_id = ""
    for kind, data in items:
        if kind == "run":
            run_id = data["run_id"]
    return run_id


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    brain = EvalBrain(answers(9), fallback=ResearchBrain())
    fake = FakeOllama(brain).start()
    agent = make_agent(tmp_path_factory.mktemp("evaluate"), fake.url)
    # Runs to chart: two models on the same set, and one in research mode.
    finish(agent.evals.start("demo", limit=12, model="gemma4:12b", backend="ollama"))
    brain.answers = answers(4)
    finish(agent.evals.start("demo", limit=12, model="qwen3:4b", backend="ollama"))
    brain.answers = {}
    finish(agent.evals.start("demo", limit=3, mode="research", backend="ollama"))
    brain.answers = answers(6)
    with app_served(agent) as url:
        yield Stack(url, agent, fake)
    agent.close()
    fake.stop()


def open_evaluate(chromium: Any, url: str) -> Any:
    context = chromium.new_context(viewport={"width": 1400, "height": 1300})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(url)
    page.wait_for_selector("#local2-question textarea")
    page.click("button[role=tab]:has-text('Evaluate')")
    page.wait_for_function(
        "() => document.querySelectorAll('#eval-runs [role=row] .body-cell').length > 0"
    )
    return page


def test_runs_are_charted_with_their_intervals_and_open_their_sessions(
    stack: Stack,
    browser: Any,
) -> None:
    page = open_evaluate(browser, stack.url)
    rows = table_rows(page, "#eval-runs")
    assert len(rows) == 3
    by_model = {r[4]: r for r in rows if r[3] == "ask"}
    assert by_model["gemma4:12b"][7].startswith("75.0 %")  # 9 of 12, graded by itself
    assert by_model["qwen3:4b"][7].startswith("33.3 %")
    assert {r[8] for r in rows} == {"the model that answered"}  # who graded, said in words
    assert "* graded by" not in page.inner_text("body")  # no footnote for a mark not shown
    # The chart: one point and one interval per model, provider and mode, drawn by the app.
    page.wait_for_selector("#eval-chart canvas, #eval-chart svg")
    page.wait_for_timeout(500)  # vega's first paint
    chart = page.locator("#eval-chart")
    box = chart.bounding_box()
    assert box is not None and box["height"] > 120
    chart.screenshot(path=str(screenshot_path("evaluate-chart")))
    shot(page, "evaluate-tab", full_page=True)
    spec = stack.agent.evals.runs()
    assert {r["mode"] for r in spec} == {"ask", "research"}

    # A question drills down to its session, in the Time travel tab.
    gemma = by_model["gemma4:12b"][0]
    page.click("#eval-pick input")
    page.locator("#eval-pick li[role=option]").filter(has_text=gemma).first.click()
    wait_text(page, "#eval-summary", "accuracy 75.0 %")
    assert "grader: the model that answered (read its grades with care)" in text_of(
        page, "#eval-summary"
    )
    question_rows = table_rows(page, "#eval-questions")
    assert len(question_rows) == 12
    first = QUESTIONS[0]  # each row: the question, what was expected, the answer, the grade
    question, expected, answer, grade = question_rows[0][:4]
    assert (question, expected, grade) == (first.question, " / ".join(first.answers), "correct")
    assert answer.startswith(f"It is {first.answers[0]}"), answer
    session = question_rows[0][-1]
    page.locator("#eval-questions .body-cell").filter(has_text=first.question).first.click()
    wait_text(page, "#tt-status", "turn(s)")
    assert page.input_value("#tt-session textarea") == session
    assert QUESTIONS[0].question in text_of(page, "#tt-turns")

    # A research run's question opens in the Research tab, its run picked there.
    page.click("button[role=tab]:has-text('Evaluate')")
    research = next(r for r in rows if r[3] == "research")[0]
    page.click("#eval-pick input")
    page.locator("#eval-pick li[role=option]").filter(has_text=research).first.click()
    wait_text(page, "#eval-summary", "research")
    run_of_question = table_rows(page, "#eval-questions")[0][-1]
    page.locator("#eval-questions .body-cell").filter(has_text=QUESTIONS[0].question).first.click()
    page.wait_for_selector("button[role=tab][aria-selected=true]:has-text('Research')")
    page.click("text=Past runs")  # the picker sits in the closed "Past runs" section
    page.wait_for_function(
        "(v) => document.querySelector('#research-past input')?.value === v",
        arg=run_of_question,
    )
    page.click("#research-open")
    wait_text(page, "#research-status", run_of_question)
    page.context.close()


def test_a_run_shows_its_progress_and_stops(stack: Stack, browser: Any) -> None:
    page = open_evaluate(browser, stack.url)
    assert not page.is_visible("#eval-stop")  # no run going
    assert not page.is_visible("#eval-resume")  # nothing picked
    page.fill("#eval-limit input", "4")
    page.click("#eval-run")
    wait_text(page, "#eval-progress", "of ", timeout=60_000)
    wait_text(page, "#eval-status", "done", timeout=120_000)
    page.wait_for_selector("#eval-stop", state="hidden")  # the run ended: nothing to stop
    assert not page.is_visible("#eval-resume")  # the run picked is done: nothing to resume
    wait_text(page, "#eval-summary", "grader: ")  # the run that ended is picked and shown
    ended = text_of(page, "#eval-progress") + text_of(page, "#eval-status")
    ended += text_of(page, "#eval-summary")
    assert ended.count("done") == 1, ended  # said once, by the status line
    rows = table_rows(page, "#eval-questions")  # its questions, with no hunting for them
    assert len(rows) == 4 and all(question and expected for question, expected, *_ in rows)
    assert "4 of 4" in text_of(page, "#eval-progress") and "left" not in ended
    assert "accuracy" in text_of(page, "#eval-status")
    newest = table_rows(page, "#eval-runs")[0]
    assert newest[1] == "done" and newest[6] == "4/4"  # listed settled, not still running

    stack.fake.delay_s = 1.0  # slow replies: the Stop lands mid-run
    page.fill("#eval-limit input", "12")
    try:
        page.click("#eval-run")
        page.wait_for_selector("#eval-progress .l2-eval-bar")
        page.wait_for_function(  # one question done: the time left is known
            "() => /about \\d/.test(document.querySelector('#eval-progress')?.innerText || '')"
        )
        assert page.is_visible("#eval-stop") and not page.is_visible("#eval-resume")
        shot(page, "evaluate-progress")
        page.click("#eval-stop")
        wait_text(page, "#eval-status", "stopped", timeout=120_000)
        page.wait_for_selector("#eval-stop", state="hidden")
        page.wait_for_selector("#eval-resume", state="visible")  # the stopped run, picked
    finally:
        stack.fake.delay_s = 0.0
    stopped = [r for r in stack.agent.evals.runs() if r["status"] == "stopped"]
    assert len(stopped) == 1 and stopped[0]["recorded"] < stopped[0]["questions"]

    # The stopped run, picked and resumed in the tab, finishes with every question.
    done = next(r for r in stack.agent.evals.runs() if r["status"] == "done")["run_id"]
    page.click("#eval-pick input")  # a done run picked: Resume does not apply
    page.locator("#eval-pick li[role=option]").filter(has_text=done).first.click()
    page.wait_for_selector("#eval-resume", state="hidden")
    page.click("#eval-pick input")
    page.locator("#eval-pick li[role=option]").filter(has_text=stopped[0]["run_id"]).first.click()
    page.wait_for_selector("#eval-resume", state="visible")
    shot(page, "evaluate-stopped-run-picked")
    page.click("#eval-resume")
    wait_text(page, "#eval-status", "done", timeout=120_000)
    resumed = next(r for r in stack.agent.evals.runs() if r["run_id"] == stopped[0]["run_id"])
    assert resumed["status"] == "done" and resumed["recorded"] == resumed["questions"] == 12
    page.context.close()
