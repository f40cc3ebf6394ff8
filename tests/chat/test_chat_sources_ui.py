"""The Chat tab's sources picker in chromium at 1280x900 against the real Gradio app: a
newcomer sees one folded line ("Where web search looks: The web"); opened, the web is taken
out and arXiv and PubMed put in, and the next question's search asks those APIs (recorded
answers on 127.0.0.1) and its tool card shows their hits; the choice is kept in the
browser (a reload shows it, and the next question searches there), and another browser
still sees the settings' choice. Screenshots: ``I56_SHOTS`` (default a temp folder outside
the repository)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from local2.service.agent import Agent
from local2.ui.server import create_app
from local2_testkit.ollama_server import FakeOllama
from tests.chat.test_chat_sources import PREPRINT, QUESTION, chat_settings, searcher
from tests.http.test_api import Served
from tests.research.test_research_sources import scholarly_apis
from tests.ui.test_ui_browser import BROWSER_MARKS, answered, ask, browser, open_page, wait_text

__all__ = ["browser"]
pytestmark = BROWSER_MARKS
FOLD = "#local2-chat-sources-box"
PICKER = "#local2-chat-sources"


def shot(page: Any, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def fold_label(page: Any) -> str:
    return str(page.inner_text(FOLD).splitlines()[0])


def picked(page: Any) -> list[str]:
    """The sources the picker shows as chosen (its tokens)."""
    return [
        t.strip()
        for t in page.eval_on_selector_all(
            f"{PICKER} .token span", "els => els.map(e => e.innerText)"
        )
        if t.strip()
    ]


def test_a_person_picks_papers_for_chat_search_and_the_browser_keeps_the_choice(
    tmp_path: Path, browser: Any
) -> None:
    shots = Path(os.environ.get("I56_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with scholarly_apis() as apis, FakeOllama(searcher) as fake:
        agent = Agent(chat_settings(fake, apis, tmp_path / "data"), backend="ollama")
        with Served(create_app(agent)) as url:
            page = open_page(browser, url, 1280, 900)
            page.wait_for_timeout(400)
            shot(page, shots, "i56c-01-fresh")
            # folded: one line naming the choice in force, none of its controls shown
            assert fold_label(page) == "Where web search looks: The web"
            assert not page.is_visible(f"{PICKER} input")

            page.get_by_text("Where web search looks").click()
            page.wait_for_selector(f"{PICKER} input")
            assert picked(page) == ["The web"]
            page.click(f"{PICKER} .token .token-remove")  # the web out
            for name in ("arXiv", "PubMed"):
                page.click(f"{PICKER} input")
                page.click(f"ul[role=listbox] li:has-text('{name}')")
            page.keyboard.press("Escape")
            page.wait_for_function(
                "(sel) => (document.querySelector(sel)?.innerText || '').includes('arXiv, PubMed')",
                arg=FOLD,
            )
            shot(page, shots, "i56c-02-picked")
            assert picked(page) == ["arXiv", "PubMed"]

            ask(page, QUESTION)
            answered(page, PREPRINT)
            assert len(apis.asked("/api/query")) == 1 and apis.asked("/entrez/eutils/esearch.fcgi")
            page.get_by_text("Tool: web_search").click()  # the tool card: each hit's record
            wait_text(page, "#local2-chat", "Sources (")
            page.wait_for_timeout(600)
            shot(page, shots, "i56c-03-answered")
            page.locator("#local2-chat").screenshot(path=str(shots / "i56c-03b-card.png"))
            card = page.inner_text("#local2-chat")
            assert "2024-02-14 · arxiv · preprint" in card, card
            assert "RETRACTED · " in card and "· pubmed · paper" in card, card

            page.reload()  # the same browser: the choice comes back
            page.wait_for_selector("#local2-question textarea")
            page.wait_for_function(
                "(sel) => (document.querySelector(sel)?.innerText || '').includes('arXiv')",
                arg=FOLD,
            )
            shot(page, shots, "i56c-04-reloaded")
            assert fold_label(page) == "Where web search looks: arXiv, PubMed"
            ask(page, QUESTION)
            answered(page, PREPRINT)
            assert len(apis.asked("/api/query")) == 2  # searched there again
            page.context.close()

            other = open_page(browser, url, 1280, 900)  # another browser: the settings' choice
            other.wait_for_timeout(400)
            assert fold_label(other) == "Where web search looks: The web"
            other.context.close()
        agent.close()
