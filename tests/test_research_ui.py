"""The Research tab in a real browser (Debian's chromium, Playwright) against the real server,
the fake Ollama with a research brain and the loopback web of captured pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.service.agent import Agent
from local2.testing.ollama_server import FakeOllama
from local2.testing.research_brain import ResearchBrain
from local2.testing.research_web import LoopbackWeb, load_pages, research_overrides
from local2.ui.server import create_app
from tests.test_api import Served
from tests.test_ui_browser import CHROMIUM, browser, open_page, shot, text_of, wait_text

__all__ = ["browser"]  # the module-scoped browser fixture, shared with the chat UI tests

CORPUS = Path(__file__).resolve().parents[1] / "bench" / "extraction_corpus" / "pages"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium: scripts/setup.sh --browser"
    ),
]


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
        with Served(create_app(agent)) as url:
            page = open_page(browser, url)
            page.click("button[role=tab]:has-text('Research')")
            page.fill("#research-question textarea", "Why did Kelsby keep its bridge?")
            page.click("#research-run")
            wait_text(page, "#research-plan", "s1")
            assert "web_search" in text_of(page, "#research-plan")
            shot(page, "research-01-plan-running")
            wait_text(page, "#research-report", "References", timeout=60_000)
            wait_text(page, "#research-status", "finished", timeout=60_000)
            shot(page, "research-02-report")

            plan = text_of(page, "#research-plan")
            assert plan.count("✓") == 3 and "✗" not in plan  # search, read, compose: ticked
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
