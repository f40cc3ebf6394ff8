"""Take the docs' screenshots of the real app (docs/images/*.png): the README's, docs/chat.md's,
docs/documents.md's and docs/evals.md's. The tests keep theirs in their temp folder; these
are taken by hand, when the app's looks change.

The app runs as it does for a person (``local2.server.create_app`` over a real ``Agent``,
real memory, the real critic, served by uvicorn on 127.0.0.1); its model is the test kit's
Ollama-protocol server (``FakeOllama``: ``RuleBrain`` for chat, ``ResearchBrain`` for research,
``EvalBrain`` for the demo set's eval runs) and the web is the test kit's loopback web over
``bench/extraction_corpus/pages``, so nothing leaves the machine. The first view is the app a
newcomer opens: no Ollama, the embedded demo model and its notice. Debian's chromium is
driven by Playwright, as ``tests/ui/test_ui_browser.py`` does. Run from the repository root with
the dev setup (``scripts/setup.sh --dev --browser``):

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
from local2.evals import DEMO_PATH, load_set
from local2.ports import free_port
from local2.server import create_app
from local2.service.agent import Agent
from local2_testkit import documents as samples
from local2_testkit.brains import RuleBrain
from local2_testkit.eval_brain import EvalBrain
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
MILL = "The Eling tidal mill was restored by the parish council in 1980."
DEAD_OLLAMA = "http://127.0.0.1:9"  # nothing listens there: the app starts as on a fresh machine


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
    """A picture as wide as the page, from the element ``top`` down (default: its top)."""
    path = OUT / f"{name}.png"
    width = page.viewport_size["width"]
    y = 0.0
    if top is not None:
        page.locator(top).first.scroll_into_view_if_needed()
        y = page.evaluate(
            "(s) => document.querySelector(s).getBoundingClientRect().top + window.scrollY", top
        )
    page.screenshot(
        path=str(path), full_page=True, clip={"x": 0, "y": y, "width": width, "height": height}
    )
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KB")


def to_top(page: Any) -> None:
    """Scroll the conversation to its first message (it follows the newest by itself)."""
    page.wait_for_timeout(500)
    page.evaluate(
        """() => document.querySelectorAll('#local2-chat *').forEach(el => {
            const style = getComputedStyle(el).overflowY;
            if ((style === 'auto' || style === 'scroll') && el.scrollHeight > el.clientHeight)
                el.scrollTop = 0; })"""
    )
    page.wait_for_timeout(300)


def opened(browser: Any, url: str, width: int = 1280, height: int = 900) -> Any:
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.set_default_timeout(60_000)
    page.goto(url)
    page.wait_for_selector("#local2-question textarea")
    page.wait_for_function("document.querySelector('#local2-session code')?.innerText.length > 8")
    return page


def first_view(browser: Any, url: str) -> None:
    """The app as it opens on a fresh machine, at 1280 and 390 wide."""
    for width, height in ((1280, 900), (390, 844)):
        page = opened(browser, url, width, height)
        page.wait_for_timeout(800)
        shoot(page, f"first-view-{width}-wide", height=height)
        page.context.close()


def resumed(browser: Any, url: str, session: str) -> None:
    """The chat's session resumed in a new page: at 1280 wide with its tool card open, and
    on a phone."""
    for width, height in ((1280, 900), (390, 844)):
        page = opened(browser, url, width, height)
        page.fill("#local2-session-pick input", session)
        page.keyboard.press("Enter")
        page.click("#local2-resume")
        wait_text(page, "#local2-chat", "Tool: web_search")
        if width > 400:
            page.click("#local2-chat >> text=Tool: web_search")
            wait_text(page, "#local2-chat", "Result (")
        to_top(page)
        page.screenshot(path=str(OUT / f"resumed-session-{width}-wide.png"), full_page=width < 400)
        page.context.close()


def document_hits(browser: Any, url: str, folder: Path) -> None:
    """A PDF dropped on the attach box, and its passage for the question as a document hit."""
    pages = [[" ".join(samples.sentences(n, 4))] for n in range(1, 6)]
    pages[2].append(MILL)
    pdf = folder / "Parish report.pdf"
    pdf.write_bytes(samples.pdf_of(pages, "Parish report"))
    page = opened(browser, url)
    page.set_input_files("#local2-attach input[type=file]", [str(pdf)])
    wait_text(page, "#local2-attached", "Parish report.pdf")
    page.fill("#local2-question textarea", "When was the Eling tidal mill restored?")
    page.click("#local2-send")
    wait_text(page, "#local2-document-hits", "Parish report.pdf")
    wait_text(page, "#local2-chat", "1980")
    to_top(page)
    shoot(page, "document-hits-1280-wide")
    page.context.close()


def evaluate_chart(browser: Any, url: str) -> None:
    """The Evaluate tab's chart of the runs made before the app opened."""
    page = opened(browser, url, 1400, 1300)
    page.click("button[role=tab]:has-text('Evaluate')")
    page.wait_for_selector("#eval-chart canvas, #eval-chart svg")
    page.wait_for_timeout(800)  # vega's first paint
    page.locator("#eval-chart").screenshot(path=str(OUT / "evaluate-chart.png"))
    page.context.close()


def eval_runs(agent: Agent, brain: EvalBrain) -> None:
    """Two models' runs of the demo set (9 and 4 of 12 right), for the Evaluate tab's chart."""
    questions = load_set(DEMO_PATH).questions[:12]
    for model, right in (("gemma4:12b", 9), ("qwen3:4b", 4)):
        brain.answers = {
            q.question: f"It is {q.answers[0]}." if i < right else "I don't know."
            for i, q in enumerate(questions)
        }
        for _ in agent.evals.start("demo", limit=12, model=model, backend="ollama"):
            pass
    brain.answers = {}


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


def fresh_machine(browser: Any, data: str) -> None:
    """The first view: ``backend: auto`` with no Ollama, so the embedded demo model answers."""
    settings = load_settings(
        overrides={"system": {"ollama_host": DEAD_OLLAMA, "data_dir": str(Path(data) / "fresh")}}
    )
    agent = Agent(settings)
    url, server = served(create_app(agent))
    try:
        first_view(browser, url)
    finally:
        server.should_exit = True
        agent.close()


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    brain = EvalBrain({}, fallback=Brains())
    with (
        tempfile.TemporaryDirectory() as data,
        LoopbackWeb(load_pages(PAGES, COAST)) as web,
        FakeOllama(brain, chunk_delay_s=0.01) as fake,
        sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        fresh_machine(browser, data)
        overrides = research_overrides(web, data)
        overrides["system"]["ollama_host"] = fake.url
        overrides["generator"] = {"backend": "ollama"}
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        eval_runs(agent, brain)
        url, server = served(create_app(agent))
        try:
            page = opened(browser, url)
            session = chat(page)
            time_travel(page)
            research(page)
            page.context.close()
            resumed(browser, url, session)
            document_hits(browser, url, Path(data))
            evaluate_chart(browser, url)
        finally:
            browser.close()
            server.should_exit = True
            agent.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
