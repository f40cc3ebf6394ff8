"""The app in a real browser, in one place for every browser test: Debian's chromium (the
``browser`` fixture, tests/conftest.py), the app served for an agent (:func:`app_served`), a
page on it at 1280x900 (:func:`open_page`), what the page shows, and screenshots into this
run's temp folder (:func:`shot`; never the repository's files)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.server import create_app
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama
from tests.kit.helpers import screenshot_path
from tests.kit.served import Served

CHROMIUM = Path("/usr/bin/chromium")


BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


NEWS = "What major AI news broke this week?"
# The window a person's laptop shows the app in: every page opens at this size unless its test
# needs more room for what it looks at.
WIDTH, HEIGHT = 1280, 900


# Every browser test's marks: slow, and skipped without Debian's chromium.
BROWSER_MARKS = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium: scripts/setup.sh --browser"
    ),
]


@dataclass
class Stack:
    url: str
    agent: Agent
    fake: FakeOllama


def make_agent(data_dir: Path, ollama_url: str, **kwargs: Any) -> Agent:
    settings = load_settings(
        overrides={
            "system": {"ollama_host": ollama_url, "data_dir": str(data_dir)},
            "generator": {"backend": "ollama"},
            "web": {"search": {"provider": "mock"}},
        }
    )
    return Agent(settings, backend="ollama", **kwargs)


@contextmanager
def app_served(agent: Agent, **app: Any) -> Iterator[str]:
    """The app, the API and ``/mcp`` for ``agent`` on a loopback port, as ``local2 serve``
    puts them together (``create_app``; ``ui=False``: the API alone): its URL, until the
    block ends."""
    with Served(create_app(agent, **app)) as url:
        yield url


def open_page(browser: Any, url: str, width: int = WIDTH, height: int = HEIGHT) -> Any:
    """A new page (its own cookies) on the app at ``url``, once its question box and session
    are shown."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url)
    page.wait_for_selector("#local2-question textarea")
    page.wait_for_function("document.querySelector('#local2-session code')?.innerText.length > 8")
    return page


def shot(page: Any, name: str, full_page: bool = False) -> None:
    """The page as shown, ``<name>.png`` in this run's screenshot folder."""
    # Mostly not full_page: resizing the viewport re-renders the chat and closes opened
    # sections (fine for a first look at a phone-sized page).
    page.screenshot(path=str(screenshot_path(name)), full_page=full_page)


def chat_to_top(page: Any) -> None:
    """Scroll the conversation to its first message (it follows the newest by itself)."""
    page.wait_for_timeout(500)  # let the chat's own scroll to the newest message happen first
    page.evaluate(
        """() => document.querySelectorAll('#local2-chat *').forEach(el => {
            const style = getComputedStyle(el).overflowY;
            if ((style === 'auto' || style === 'scroll') && el.scrollHeight > el.clientHeight)
                el.scrollTop = 0; })"""
    )
    page.wait_for_timeout(200)


def text_of(page: Any, selector: str) -> str:
    return page.inner_text(selector)


def wait_text(page: Any, selector: str, needle: str, timeout: float = 30_000) -> None:
    """Until the element's text holds ``needle``; a timeout says what the element showed."""
    try:
        page.wait_for_function(
            "([sel, needle]) => (document.querySelector(sel)?.innerText || '').includes(needle)",
            arg=[selector, needle],
            timeout=timeout,
        )
    except Exception as exc:
        if type(exc).__name__ != "TimeoutError":  # playwright's own, imported with the browser
            raise
        shown = page.evaluate("(sel) => document.querySelector(sel)?.innerText ?? null", selector)
        raise AssertionError(f"{selector} never showed {needle!r}; it shows: {shown!r}") from None


def ask(page: Any, question: str) -> None:
    page.fill("#local2-question textarea", question)
    page.click("#local2-send")


def session_of(page: Any) -> str:
    return text_of(page, "#local2-session code").strip()


def table_rows(page: Any, selector: str) -> list[list[str]]:
    """The cells of a ``gr.Dataframe`` as shown (its data rows, not its sizing rows)."""
    return page.evaluate(
        """(sel) => [...document.querySelectorAll(sel + ' [role=row]')]
            .map(r => [...r.querySelectorAll('.body-cell')].map(c => c.innerText.trim()))
            .filter(cells => cells.length)""",
        selector,
    )


def answered(page: Any, needle: str) -> None:
    """Wait for a turn to finish: its answer is on screen and the rating buttons are back."""
    wait_text(page, "#local2-chat", needle)
    page.wait_for_selector("#local2-rate-1:not([disabled])")


def load_checkpoints(page: Any, needle: str = "turn(s)") -> None:
    """Press Load turns until the status says ``needle``. Once, under load, a press
    just after the Time travel tab opened (its parts mount as it opens) showed nothing for
    30 s; a person presses again, and so does this, at most three times."""
    for attempt in range(3):
        page.click("#tt-load")
        try:
            wait_text(page, "#tt-status", needle, timeout=10_000)
            return
        except AssertionError:
            if attempt == 2:
                raise


def rate(page: Any, rating: int) -> None:
    page.wait_for_selector(f"#local2-rate-{rating}:not([disabled])")
    page.click(f"#local2-rate-{rating}")


def resume(page: Any, session: str) -> None:
    page.fill("#local2-session-pick input", session)
    page.keyboard.press("Enter")
    page.click("#local2-resume")
