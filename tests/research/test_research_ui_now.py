"""The Research tab shows what is relevant now, in a real browser (Debian's chromium, Playwright)
against the real server, the Ollama-protocol server with a research brain and the loopback
web: no steering control before a run, only those that apply while it runs or waits, a
status line naming the current step from the first second, a fallback plan that says why, a
new run on a clean page, and a run whose every search fails ending ``no_sources`` with its
next step and no model text. Screenshots of each state go to the test's temp folder."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.service.agent import Agent
from local2.tools.search import ddgs
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain, default_plan
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides
from tests.kit.browser import BROWSER_MARKS, app_served, text_of, wait_text
from tests.tools.helpers import RecordedDDGS

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"
QUESTION = "Why did Kelsby keep its bridge?"
pytestmark = BROWSER_MARKS

# Every control that steers a run, by what it is for.
PAUSED_PLAN = ["#research-plan-edit", "#research-approve", "#research-pause-stop"]
PAUSED_QUESTION = ["#research-answer", "#research-send"]
RUNNING = ["#research-say", "#research-say-send", "#research-add", "#research-stop"]
BRANCHES = ["#research-branch", "#research-stop-branch", "#research-drop-branch"]
FOLLOW_UP = ["#research-followup", "#research-ask"]
STEERING = PAUSED_PLAN + PAUSED_QUESTION + RUNNING + BRANCHES + FOLLOW_UP

# Every text the status line shows, as it shows it (the page records each one).
RECORD_STATUS = """() => {
    window.statuses = [];
    const box = document.querySelector('#research-status');
    const note = () => {
        const text = box.innerText.trim();
        const last = window.statuses[window.statuses.length - 1];
        if (text && text !== last) window.statuses.push(text);
    };
    new MutationObserver(note).observe(box, {subtree: true, childList: true, characterData: true});
}"""


@dataclass
class Tab:
    page: Any
    shots: Path
    web: LoopbackWeb
    brain: ResearchBrain

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=True)

    def visible(self, selectors: list[str]) -> list[str]:
        return [s for s in selectors if self.page.is_visible(s)]

    def ask(self, question: str, review: bool) -> None:
        self.page.fill("#research-question textarea", question)
        if self.page.is_checked("#research-review input") != review:
            self.page.click("#research-review input")
        self.page.click("#research-run")


@contextmanager
def research_tab(
    browser: Any, tmp_path: Path, brain: ResearchBrain, delay_s: float = 0.0, **web: Any
) -> Iterator[Tab]:
    """The app on the fake Ollama (answering after ``delay_s``) and the loopback web, its
    Research tab open in a 1280x900 page; ``web``: the web search settings."""
    with (
        FakeOllama(brain, chunk_delay_s=0.01, delay_s=delay_s) as fake,
        LoopbackWeb(load_pages(CORPUS)) as loopback,
    ):
        overrides = research_overrides(loopback, tmp_path / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["memory"] = {"enabled": False}
        overrides["research"].update(max_rounds=1)
        overrides["web"]["search"].update(web)
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        shots = tmp_path / "shots"
        shots.mkdir()
        with app_served(agent) as url:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.goto(url)
            page.wait_for_selector("#local2-question textarea")
            page.click("button[role=tab]:has-text('Research')")
            page.wait_for_selector("#research-question textarea")
            page.evaluate(RECORD_STATUS)
            try:
                yield Tab(page, shots, loopback, brain)
            finally:
                context.close()
        agent.close()


def test_a_fresh_research_tab_shows_no_steering_control(tmp_path: Path, browser: Any) -> None:
    with research_tab(browser, tmp_path, ResearchBrain()) as tab:
        tab.page.wait_for_timeout(500)  # what the page shows once it has settled
        tab.shot("fresh")
        assert tab.visible(STEERING) == []
        assert tab.visible(["#research-question", "#research-run", "#research-review"]) == [
            "#research-question",
            "#research-run",
            "#research-review",
        ]


def test_a_run_names_its_current_step_from_the_first_second(tmp_path: Path, browser: Any) -> None:
    """Each reply of the model takes 2 s, each search 1.5 s, each page 1 s: the status line says
    "Planning" within 1 s of pressing Research, then names the search, the pages read and
    the writing; only a running run's controls show meanwhile, and the follow-up after."""
    brain = ResearchBrain()
    with research_tab(browser, tmp_path, brain, delay_s=2.0) as tab:
        tab.web.search_delay_s = 1.5
        tab.web.slow_pages = {name: 1.0 for name in tab.web.pages}
        tab.ask(QUESTION, review=False)
        wait_text(tab.page, "#research-status", "Planning", timeout=1_000)
        tab.shot("planning")
        wait_text(tab.page, "#research-status", f'Searching "{QUESTION}"')
        tab.shot("searching")
        assert tab.visible(STEERING) == RUNNING  # one sub-question: nothing to stop but the run
        wait_text(tab.page, "#research-status", "finished", timeout=60_000)
        tab.shot("finished")
        seen = [s for s in tab.page.evaluate("window.statuses") if s.startswith(("Run", "Plan"))]
        assert any(s.startswith("Planning") for s in seen), seen
        assert any("Reading 2 pages" in s for s in seen), seen
        assert any("Writing the report" in s for s in seen), seen
        assert tab.visible(STEERING) == FOLLOW_UP


def two_subquestions(first: str, second: str) -> dict[str, Any]:
    """A plan that searches two things and reads the top results of each."""
    plan = default_plan(first)
    other = default_plan(second)["steps"][:2]
    other[0]["id"], other[1]["id"] = "s3", "s4"
    other[1]["args"]["from_step"], other[1]["requires"] = "s3", ["s3"]
    compose = {**plan["steps"][2], "id": "s5", "requires": ["s2", "s4"]}
    return {**plan, "steps": [*plan["steps"][:2], *other, compose]}


def test_the_sub_question_picker_shows_with_two_to_pick_and_its_buttons_once_one_is(
    tmp_path: Path, browser: Any
) -> None:
    """Two sub-questions running: the picker offers both, and Stop it / Drop it show only
    once one is picked (before, they would act on nothing)."""
    brain = ResearchBrain(plans=[two_subquestions(QUESTION, "Kelsby swing bridge history")])
    with research_tab(browser, tmp_path, brain, delay_s=1.0) as tab:
        tab.web.search_delay_s = 2.0
        tab.web.slow_pages = {name: 8.0 for name in tab.web.pages}  # time to pick, read on
        tab.ask(QUESTION, review=False)
        tab.page.wait_for_selector("#research-branch", state="visible")
        assert tab.visible(BRANCHES) == ["#research-branch"]  # nothing picked yet
        tab.page.click("#research-branch input")
        listed = tab.page.inner_text("ul[role=listbox]")
        assert f"q1: {QUESTION}" in listed and "q2: Kelsby swing bridge history" in listed
        tab.page.click("ul[role=listbox] li:has-text('q2: Kelsby')")
        tab.page.wait_for_selector("#research-drop-branch", state="visible")
        tab.shot("picked")
        assert tab.visible(BRANCHES) == BRANCHES
        assert "finished" not in text_of(tab.page, "#research-status")  # it runs meanwhile
        wait_text(tab.page, "#research-status", "finished", timeout=60_000)


def test_a_failed_sub_question_is_not_offered_to_stop_or_drop(tmp_path: Path, browser: Any) -> None:
    """The first search fails and the replan searches other words: the failed one has
    nothing to stop or leave out, so no picker shows, only the run's own controls."""
    brain = ResearchBrain()
    with research_tab(browser, tmp_path, brain, delay_s=1.0) as tab:
        tab.web.search_failures = [404]
        tab.web.search_delay_s = 1.0
        tab.web.slow_pages = {name: 1.0 for name in tab.web.pages}
        tab.ask(QUESTION, review=False)
        seen: list[list[str]] = []
        for _ in range(200):
            seen.append(tab.visible(STEERING))
            if "finished" in text_of(tab.page, "#research-status"):
                break
            tab.page.wait_for_timeout(150)
        tab.shot("replanned")
        assert "Replanned" in text_of(tab.page, "#research-plan")
        assert RUNNING in seen  # it was seen running
        assert not [v for v in seen if set(v) & set(BRANCHES)], seen


def test_a_paused_plan_shows_its_own_controls_and_a_new_run_starts_on_a_clean_page(
    tmp_path: Path, browser: Any
) -> None:
    """The first run goes to its report; the second's plan replies are no JSON, so the rule
    plans it, and says why; it pauses with that plan, showing only the plan's controls."""
    brain = ResearchBrain(plans=[default_plan(QUESTION), "not json", "still not json"])
    with research_tab(browser, tmp_path, brain, delay_s=1.0) as tab:
        tab.ask(QUESTION, review=False)
        wait_text(tab.page, "#research-status", "finished", timeout=60_000)
        assert "s1" in text_of(tab.page, "#research-plan")
        tab.ask("How do tide mills work?", review=True)
        tab.page.wait_for_timeout(700)  # within a second, before the new plan is made
        tab.shot("new-run")
        assert "s1" not in text_of(tab.page, "#research-plan")
        assert text_of(tab.page, "#research-report").strip() == ""
        assert not tab.page.is_visible("#research-download")
        wait_text(tab.page, "#research-pause-info", "before the first search", timeout=60_000)
        tab.shot("paused-plan")
        assert tab.visible(STEERING) == PAUSED_PLAN
        plan = text_of(tab.page, "#research-plan")
        assert (
            "Plan for round 1: The model's plan could not be used (its reply was not a plan "
            "in the form asked for), so a standard plan was used." in plan
        ), plan
        assert "JSON" not in plan, plan  # the planner's words: under Details only
        assert not tab.page.is_visible("#research-details")
        tab.page.get_by_text("Details", exact=True).click()
        wait_text(tab.page, "#research-details", "the reply is not valid JSON")
        tab.shot("paused-plan-details")


def test_a_run_whose_every_search_fails_ends_no_sources_with_its_next_step(
    tmp_path: Path, browser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keyless search fails as the real ddgs does on a machine with no network (replayed,
    tests/fixtures/ddgs/recorded.json): the run ends ``no_sources``, the page says so and
    what to do, and shows no model text."""
    monkeypatch.setattr(ddgs, "_ddgs_client", RecordedDDGS("no_network"))
    brain = ResearchBrain(extra=["The report is as follows: green tea cures everything."])
    with research_tab(browser, tmp_path, brain, provider="ddgs") as tab:
        tab.ask("What are the health benefits of green tea?", review=False)
        wait_text(tab.page, "#research-status", "no source", timeout=60_000)
        tab.shot("no-sources")
        status = text_of(tab.page, "#research-status")
        report = text_of(tab.page, "#research-report")
        assert "no report" in status.lower(), status
        assert "No report: no source could be gathered" in report
        assert "Next step:" in report and "My library only" in report
        assert "no network" in report
        assert "compose" not in brain.requests  # no model was asked to write
        page_text = tab.page.inner_text("body")
        assert "green tea cures" not in page_text and "The report is as follows" not in page_text
        assert tab.visible(STEERING) == []  # nothing to steer, and no report to follow up
        assert not tab.page.is_visible("#research-download")
        said = tab.page.evaluate("window.statuses")
        assert not [s for s in said if "Writing the report" in s], said  # nothing was written
        assert any("nothing to write a report from" in s for s in said), said
        # Then "My library only", on an empty library: a clean page, and it says so.
        # The question stays in its box: "My library only" needs no retyping.
        asked = tab.page.input_value("#research-question textarea")
        assert asked == "What are the health benefits of green tea?", asked
        tab.page.evaluate("window.statuses = []")
        tab.page.click("#research-sources-from label:has-text('My library only')")
        tab.page.click("#research-run")
        wait_text(tab.page, "#research-status", "empty library", timeout=60_000)
        tab.shot("no-sources-library")
        said = tab.page.evaluate("window.statuses")
        assert any("Searching your library for" in s for s in said), said
        plan = text_of(tab.page, "#research-plan")
        assert "web_search in your library" in plan and "no network" not in plan, plan
        assert "Your library is empty, so no other search of it can find anything." in plan
        report = text_of(tab.page, "#research-report")
        assert "Your library is empty, so there was nothing to search" in report, report
        assert "no network" not in report and "try again later" not in report
        assert tab.visible(STEERING) == []
        tab.page.get_by_text("Past runs").click()
        tab.page.click("#research-refresh")
        tab.page.click("#research-past input")
        listed = tab.page.inner_text("ul[role=listbox]")
        assert listed.count("no sources · What are the health benefits") == 2, listed
