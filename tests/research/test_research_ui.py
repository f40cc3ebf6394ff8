"""The Research tab in a real browser (Debian's chromium, Playwright) against the real server,
the fake Ollama with a research brain and the loopback web of captured pages."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from local2.config import load_settings
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides
from tests.kit.browser import BROWSER_MARKS, app_served, open_page, shot, text_of, wait_text
from tests.research.helpers import BRIDGE, MILL, OTTERS, branches

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"

pytestmark = BROWSER_MARKS


def test_research_tab_shows_the_plan_sources_and_a_verified_report(
    tmp_path: Path, browser: Any
) -> None:
    brain = ResearchBrain(
        extra=[
            "Kelsby also has a castle [42].",
            "![tracker](https://tracker.example/pixel.png) See https://invented.example/x.",
        ]
    )
    with FakeOllama(brain, chunk_delay_s=0.01) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        web.search_delay_s = 1.0  # long enough to see the step running
        overrides = research_overrides(web, tmp_path / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["memory"] = {"enabled": False}
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        with app_served(agent) as url:
            page = open_page(browser, url)
            page.click("button[role=tab]:has-text('Research')")
            page.fill("#research-question textarea", "Why did Kelsby keep its bridge?")
            page.uncheck("#research-review input")  # straight to the report
            page.click("#research-run")
            wait_text(page, "#research-plan", "s1")
            assert "web_search" in text_of(page, "#research-plan")
            shot(page, "research-01-plan-running")
            wait_text(page, "#research-report", "References", timeout=60_000)
            wait_text(page, "#research-status", "finished", timeout=60_000)
            shot(page, "research-02-report")

            plan = text_of(page, "#research-plan")
            # The model's search, read and compose ticked; the rule's hop searched, and its
            # reads ticked or skipped (nothing new to read), none failed.
            steps = [line for line in plan.splitlines() if re.match(r"^\S+ s\d+ ", line)]
            assert [line[0] for line in steps[:2]] == ["✓", "✓"], plan
            assert steps[-1].startswith("✓") and "compose" in steps[-1], plan
            assert all(line[0] in "✓–" for line in steps) and "✗" not in plan, plan
            report = text_of(page, "#research-report")
            assert "Residents of Kelsby" in report and "castle" not in report.split("References")[0]
            assert "Removed as unsupported" in report and "[42]" in report
            links = page.eval_on_selector_all(
                "#research-report a", "els => els.map(e => e.getAttribute('href'))"
            )
            assert links and all(href.startswith(web.url) for href in links), links
            assert page.locator("#research-report img").count() == 0  # nothing loads by itself
            sources = page.eval_on_selector_all(
                "#research-sources a", "els => els.map(e => e.getAttribute('href'))"
            )
            assert sources and all(href.startswith(web.url) for href in sources)
            status = text_of(page, "#research-status")
            assert "1 unsupported" in status or "2 unsupported" in status
            with page.expect_download() as download:
                page.click("#research-download")
            saved = download.value.path()
            assert saved is not None and "## References" in Path(saved).read_text("utf-8")
            page.context.close()
        agent.close()


def test_research_tab_edits_the_plan_stops_a_branch_and_asks_a_follow_up(
    tmp_path: Path, browser: Any
) -> None:
    """The plan shown before the first search is edited in its text box (a line removed,
    one added, two swapped) and approved; while the run goes, one sub-question is stopped;
    under the report, a follow-up is answered from the run's sources."""
    brain = ResearchBrain(plans=[branches(BRIDGE, OTTERS, MILL)])
    with FakeOllama(brain, chunk_delay_s=0.01) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        web.search_delay_s = 4.0  # slow enough to stop a branch before it starts, under load too
        overrides = research_overrides(web, tmp_path / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["memory"] = {"enabled": False}
        overrides["research"].update(max_rounds=1, max_parallel=1)
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        with app_served(agent) as url:
            page = open_page(browser, url)
            page.click("button[role=tab]:has-text('Research')")
            page.fill("#research-question textarea", "Why did Kelsby keep its bridge?")
            assert page.is_checked("#research-review input")  # the app's default
            page.click("#research-run")
            wait_text(page, "#research-pause-info", "before the first search", timeout=60_000)
            editor = "#research-plan-edit textarea"
            page.wait_for_function(
                "(sel) => document.querySelector(sel)?.value.includes('q3: tide mill')",
                arg=editor,
                timeout=60_000,
            )
            assert not page.is_visible("#research-answer")  # a plan, not a question
            shown = page.input_value(editor)
            assert shown.splitlines() == [f"q1: {BRIDGE}", f"q2: {OTTERS}", f"q3: {MILL}"]
            assert web.hits == []
            shot(page, "research-03-plan-review")
            page.fill(editor, f"q3: {MILL}\nq1: {BRIDGE}\nsourdough starter")
            page.click("#research-approve")
            wait_text(page, "#research-plan", "running", timeout=60_000)
            page.fill("#research-branch input", "q1")
            page.keyboard.press("Enter")
            page.click("#research-stop-branch")
            wait_text(page, "#research-steer-note", "Stopping q1")
            shot(page, "research-04-branch-stopped")
            wait_text(page, "#research-status", "finished", timeout=90_000)
            plan = text_of(page, "#research-plan")
            assert "stopped by the person" in plan
            hits = len(web.hits)
            page.fill("#research-followup textarea", "How does a tide mill store the tide?")
            page.click("#research-ask")
            wait_text(page, "#research-followups", "Follow-up 1", timeout=60_000)
            shot(page, "research-05-follow-up")
            followups = text_of(page, "#research-followups")
            assert "How does a tide mill store the tide?" in followups
            assert "from the sources already read" in followups and len(web.hits) == hits
            links = page.eval_on_selector_all(
                "#research-followups a", "els => els.map(e => e.getAttribute('href'))"
            )
            assert links and all(href.startswith(web.url) for href in links), links
            page.context.close()
        agent.close()
    assert BRIDGE not in web.searches() and OTTERS not in web.searches()  # stopped; removed
    assert web.searches() == [MILL, "sourdough starter"]


def test_research_tab_stop_at_the_plan_review_ends_the_run(tmp_path: Path, browser: Any) -> None:
    """Stop pressed while the plan waits for review ends the run as a running run's Stop
    does: the pause goes, the report says nothing was read, the status says stopped and
    why, and reopening the run shows it stopped without a search."""
    brain = ResearchBrain(plans=[branches(BRIDGE, OTTERS)])
    with FakeOllama(brain, chunk_delay_s=0.01) as fake, LoopbackWeb(load_pages(CORPUS)) as web:
        overrides = research_overrides(web, tmp_path / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["memory"] = {"enabled": False}
        overrides["research"].update(max_rounds=2)
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        with app_served(agent) as url:
            page = open_page(browser, url)
            page.click("button[role=tab]:has-text('Research')")
            page.fill("#research-question textarea", "Why did Kelsby keep its bridge?")
            page.click("#research-run")
            wait_text(page, "#research-pause-info", "before the first search", timeout=60_000)
            wait_text(page, "#research-status", "waits for you", timeout=60_000)
            page.click("#research-pause-stop")
            wait_text(page, "#research-status", "stopped", timeout=60_000)
            shot(page, "research-06-stopped-at-review")
            status = text_of(page, "#research-status")
            assert "stopped (the person stopped the run)" in status and "0 sources" in status
            report = text_of(page, "#research-report")
            assert "the person stopped the run before anything was searched or read" in report
            plan = text_of(page, "#research-plan")
            assert plan.count("the person stopped the run") >= 4, plan  # each step left out
            assert "You: stopped the run" in plan
            page.wait_for_selector("#research-pause", state="hidden")
            run_id = re.search(r"Run (\w+)", status)
            assert run_id is not None
            page.click("text=Past runs")
            page.fill("#research-past input", run_id.group(1))
            page.keyboard.press("Enter")
            page.click("#research-open")
            wait_text(page, "#research-status", f"Run {run_id.group(1)} stopped", timeout=60_000)
            page.context.close()
        listed = agent.research.runs(5)
        agent.close()
    assert [(r["run_id"], r["status"]) for r in listed] == [(run_id.group(1), "stopped")]
    assert web.hits == []  # nothing searched or read, at the stop or on reopening
