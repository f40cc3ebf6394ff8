"""The Research tab's "Papers only" in chromium at 1280x900 against the real Gradio app: the
person searches only the scholarly sources they ticked, neither the web nor the library.

Chosen with none ticked, the run is refused with what to do (nothing runs); choosing it
opens the fold where the sources are ticked; with arXiv and PubMed ticked the run asks
those APIs (recorded answers on 127.0.0.1) and the loopback web is never searched, every
source in the panel is a paper or preprint with its date. Screenshots go to the run's
screenshot folder (tests/kit/browser.py: shot)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages
from tests.kit.browser import BROWSER_MARKS, app_served, shot, wait_text
from tests.research.helpers import CORPUS
from tests.research.sources_helpers import QUESTION, scholarly_agent, scholarly_apis

pytestmark = BROWSER_MARKS


def test_papers_only_searches_the_ticked_sources_and_never_the_web(
    tmp_path: Path, browser: Any
) -> None:
    with (
        FakeOllama(ResearchBrain(), chunk_delay_s=0.01) as fake,
        LoopbackWeb(load_pages(CORPUS)) as web,
        scholarly_apis() as apis,
    ):
        agent = scholarly_agent(fake, web, apis, tmp_path / "data")
        with app_served(agent) as url:
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
            shot(page, "i56p-01-none-ticked", full_page=True)
            assert "Tick arXiv, PubMed or another" in page.inner_text("#research-status")
            assert not apis.paths() and not web.searches()

            for name in ("arXiv", "PubMed"):
                page.click("#research-more-sources input")
                page.click(f"ul[role=listbox] li:has-text('{name}')")
            page.keyboard.press("Escape")
            page.wait_for_timeout(400)
            shot(page, "i56p-02-ticked", full_page=True)
            page.click("#research-run")
            page.wait_for_function(
                "() => document.querySelector('#research-status')?.innerText.includes('finished')",
                timeout=90_000,
            )
            page.wait_for_timeout(300)
            shot(page, "i56p-03-report", full_page=True)
            sources = page.inner_text("#research-sources")
            context.close()
        agent.close()
        searched_web = web.searches()
    assert apis.asked("/api/query") and apis.asked("/entrez/eutils/esearch.fcgi")
    assert searched_web == []  # no web, no library: the papers alone
    lines = [ln for ln in sources.splitlines() if ln.strip()]
    assert lines and all(("arxiv" in ln or "pubmed" in ln) for ln in lines), sources
    assert "undated" not in sources  # every paper carries its date
