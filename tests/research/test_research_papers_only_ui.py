"""The Research tab's "Papers only" in chromium at 1280x900 against the real Gradio app: the
person searches only the scholarly sources they ticked, neither the web nor the library.

Chosen with none ticked, the run is refused with what to do (nothing runs); choosing it
opens the fold where the sources are ticked; with arXiv and PubMed ticked the run asks
those APIs (recorded answers on 127.0.0.1) and the loopback web is never searched, every
source in the panel is a paper or preprint with its date. Screenshots: ``I56_SHOTS``
(default a temp folder outside the repository)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from local2.config import load_settings
from local2.service.agent import Agent
from local2.ui.server import create_app
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides
from tests.http.test_api import Served
from tests.research.test_research_sources import QUESTION, scholarly_apis
from tests.research.test_research_sources_ui import CORPUS, shot
from tests.ui.test_ui_browser import BROWSER_MARKS, browser, wait_text

__all__ = ["browser"]
pytestmark = BROWSER_MARKS


def test_papers_only_searches_the_ticked_sources_and_never_the_web(
    tmp_path: Path, browser: Any
) -> None:
    shots = Path(os.environ.get("I56_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with (
        FakeOllama(ResearchBrain(), chunk_delay_s=0.01) as fake,
        LoopbackWeb(load_pages(CORPUS)) as web,
        scholarly_apis() as apis,
    ):
        overrides = research_overrides(web, tmp_path / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["memory"] = {"enabled": False}
        overrides["research"].update(max_rounds=1)
        overrides["web"]["fetch"]["allow_hosts"].append(apis.url("").removeprefix("http://"))
        overrides["scholarly"] = {
            "arxiv": {"base_url": apis.url("/api/query")},
            "pubmed": {"base_url": apis.url("/entrez/eutils"), "min_interval_s": 0},
        }
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        with Served(create_app(agent)) as url:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.goto(url)
            page.click("button[role=tab]:has-text('Research')")
            page.wait_for_selector("#research-question textarea")
            assert not page.is_visible("#research-more-sources")  # folded, as for a newcomer

            page.uncheck("#research-review input")
            page.check("#research-sources-from input[value='papers']")
            page.wait_for_selector("#research-more-sources input")  # the fold opened for it
            page.fill("#research-question textarea", QUESTION)
            page.click("#research-run")  # none ticked: refused, with what to do
            wait_text(page, "#research-status", "none is ticked")
            page.wait_for_timeout(300)
            shot(page, shots, "i56p-01-none-ticked")
            assert "Tick arXiv, PubMed or another" in page.inner_text("#research-status")
            assert not apis.paths() and not web.searches()

            for name in ("arXiv", "PubMed"):
                page.click("#research-more-sources input")
                page.click(f"ul[role=listbox] li:has-text('{name}')")
            page.keyboard.press("Escape")
            page.wait_for_timeout(400)
            shot(page, shots, "i56p-02-ticked")
            page.click("#research-run")
            page.wait_for_function(
                "() => document.querySelector('#research-status')?.innerText.includes('finished')",
                timeout=90_000,
            )
            page.wait_for_timeout(300)
            shot(page, shots, "i56p-03-report")
            sources = page.inner_text("#research-sources")
            context.close()
        agent.close()
        searched_web = web.searches()
    assert apis.asked("/api/query") and apis.asked("/entrez/eutils/esearch.fcgi")
    assert searched_web == []  # no web, no library: the papers alone
    lines = [ln for ln in sources.splitlines() if ln.strip()]
    assert lines and all(("arxiv" in ln or "pubmed" in ln) for ln in lines), sources
    assert "undated" not in sources  # every paper carries its date
