"""Take the README's screenshots of the real app (docs/images/*.png).

The app runs as it does for a person (``local2.ui.server.create_app`` over a real ``Agent``,
real memory, the real critic, served by uvicorn on 127.0.0.1); its model is the test kit's
Ollama-protocol server (``FakeOllama``: ``RuleBrain`` for chat, ``ResearchBrain`` for research)
and the web is the test kit's loopback web over ``bench/extraction_corpus/pages``, so nothing
leaves the machine. Debian's chromium is driven by Playwright, as ``tests/test_ui_browser.py``
does. Run from the repository root with the dev setup (``scripts/setup.sh --dev --browser``):

    PYTHONPATH=src:testkit/src .venv/bin/python docs/images/take_screenshots.py
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from playwright.sync_api import sync_playwright

from local2.config import load_settings
from local2.ports import free_port
from local2.service.agent import Agent
from local2.ui.server import create_app
from local2_testkit.brains import RuleBrain
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "images"
PAGES = ROOT / "bench" / "extraction_corpus" / "pages"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
CHAT = (
    "Search the web for the latest on the Kelsby harbour swing bridge and summarise the top result."
)
RESEARCH = "Why did Kelsby keep its harbour swing bridge?"
# The corpus's pages about the coast (its others are recipes and reviews).
COAST = [
    "01_harbour_bridge",
    "05_river_survey",
    "06_tidal_mill",
    "08_night_trains",
    "13_council_budget",
]
RESEARCH_TITLES = {"ResearchPlan", "ResearchGaps", "ResearchFollowup"}


class Brains:
    """Research's requests (a plan, gaps, a report over numbered sources) to ResearchBrain,
    the chat's to RuleBrain."""

    def __init__(self) -> None:
        self.chat = RuleBrain()
        self.research = ResearchBrain()

    def __call__(self, request: dict[str, Any]) -> Any:
        fmt = request.get("format")
        title = fmt.get("title", "") if isinstance(fmt, dict) else ""
        last = str((request.get("messages") or [{}])[-1].get("content", ""))
        if title in RESEARCH_TITLES or ("Sources:" in last and "[1]" in last):
            return self.research(request)
        return self.chat(request)


def served(app: Any) -> tuple[str, uvicorn.Server]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


def wait_text(page: Any, selector: str, needle: str, timeout: float = 60_000) -> None:
    page.wait_for_function(
        "([s, n]) => (document.querySelector(s)?.innerText || '').includes(n)",
        arg=[selector, needle],
        timeout=timeout,
    )


def shoot(page: Any, name: str, top: str | None = None, height: int = 900) -> None:
    """A 1280-wide picture, from the element ``top`` down (default: the page's top)."""
    path = OUT / f"{name}.png"
    y = 0.0
    if top is not None:
        page.locator(top).first.scroll_into_view_if_needed()
        y = page.evaluate(
            "(s) => document.querySelector(s).getBoundingClientRect().top + window.scrollY", top
        )
    page.screenshot(
        path=str(path), full_page=True, clip={"x": 0, "y": y, "width": 1280, "height": height}
    )
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KB")


def chat(page: Any) -> str:
    page.fill("#local2-question textarea", CHAT)
    page.click("#local2-send")
    wait_text(page, "#local2-critic", "Critic:")
    page.locator("#local2-chat [role=button]").filter(has_text="Thinking").first.click()
    page.wait_for_timeout(500)
    page.evaluate(
        """() => document.querySelectorAll('#local2-chat *').forEach(el => {
            const style = getComputedStyle(el).overflowY;
            if ((style === 'auto' || style === 'scroll') && el.scrollHeight > el.clientHeight)
                el.scrollTop = 0; })"""
    )
    page.wait_for_timeout(300)
    shoot(page, "chat")
    return page.inner_text("#local2-session code").strip()


def time_travel(page: Any) -> None:
    page.click("button[role=tab]:has-text('Time travel')")  # it loads the chat's session
    wait_text(page, "#tt-status", "turn(s)")
    page.click("#tt-turn input")
    page.locator("#tt-turn li[role=option]").filter(has_text="Turn 1").first.click()
    wait_text(page, "#tt-original", "Kelsby")
    page.fill("#tt-edit textarea", "What is the latest news about the Kelsby night trains?")
    page.click("#tt-fork")
    wait_text(page, "#tt-status", "Forked")
    page.wait_for_timeout(500)
    shoot(page, "time-travel", top="#tt-session", height=1000)


def research(page: Any) -> None:
    page.click("button[role=tab]:has-text('Research')")
    page.fill("#research-question textarea", RESEARCH)
    review = page.locator("#research-review input")
    if review.count() and review.first.is_checked():
        review.first.uncheck()
    page.click("#research-run")
    wait_text(page, "#research-report", "Findings", timeout=120_000)
    page.wait_for_timeout(800)
    shoot(page, "research", top="#research-status", height=760)


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as data,
        LoopbackWeb(load_pages(PAGES, COAST)) as web,
        FakeOllama(Brains(), chunk_delay_s=0.01) as fake,
    ):
        overrides = research_overrides(web, data)
        overrides["system"]["ollama_host"] = fake.url
        overrides["generator"] = {"backend": "ollama"}
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        url, server = served(create_app(agent))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                page.set_default_timeout(60_000)
                page.goto(url)
                page.wait_for_selector("#local2-question textarea")
                chat(page)
                time_travel(page)
                research(page)
                browser.close()
        finally:
            server.should_exit = True
            agent.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
