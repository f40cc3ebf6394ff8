"""The Watches tab in a real browser (Debian's chromium, Playwright) against the real server,
at 1280x900: a watch that ran once (a real research run: ChatOllama against the test kit's
Ollama-protocol server, SearXNG and web_fetch on a loopback web) is listed with its next
run and what its last run found, its notice marked unread; a bad schedule is refused with
an example and nothing is added; a new watch is added, paused, resumed and removed; notices
are marked read. A watch run twice in one second (the pages changed between) shows that its
second run looked first at what appeared since the first, in its row and its notice."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.contracts import LOCAL
from local2.service.agent import Agent
from local2.ui.server import create_app
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, research_overrides
from tests.http.test_api import Served
from tests.ui.test_ui_browser import BROWSER_MARKS, CHROMIUM, open_page, shot, wait_text
from tests.watch.test_watch_runner import (
    BATTERY,
    GRID,
    OLD,
    PLANT,
    PLANT_AFTER,
    QUESTION,
    dated,
    since_of,
)

pytestmark = BROWSER_MARKS
SHOTS = Path("/tmp/i57-shots")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("watches-ui")
    with LoopbackWeb([PLANT, GRID]) as web, FakeOllama(ResearchBrain()) as fake:
        overrides: dict[str, Any] = research_overrides(web, base / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["generator"] = {"backend": "ollama"}
        overrides["memory"] = {"enabled": False}
        overrides["research"].update(max_rounds=1)
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        watch = agent.watches.add(LOCAL, QUESTION, "every Monday 07:00", timezone="Europe/Berlin")
        ran = agent.watches.run_now(LOCAL, watch["watch_id"], agent.research)
        assert ran["status"] == "done", ran
        with Served(create_app(agent)) as url:
            yield {"url": url, "agent": agent, "watch": watch, "ran": ran}
        agent.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        yield chromium
        chromium.close()


def snap(page: Any, name: str) -> None:
    shot(page, name)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def test_the_watches_tab_lists_adds_pauses_removes_and_marks_read(
    app: dict[str, Any], browser: Any
) -> None:
    desk = app["agent"].watches
    first = app["watch"]["watch_id"]
    page = open_page(browser, app["url"], width=1280, height=900)
    page.get_by_role("tab", name="Watches").click()
    wait_text(page, "#watches-table", first)
    table = page.inner_text("#watches-table")
    assert QUESTION in table and "every Monday 07:00 (Europe/Berlin)" in table
    assert "first run: 2 sources" in table  # what the last run found, shown first
    notices = page.inner_text("#watches-notices")
    assert notices.startswith("● ") and "first run" in notices and app["ran"]["run_id"] in notices
    snap(page, "watches-1-listed")

    # A bad schedule: refused with an example, nothing added, what was typed kept to fix.
    page.fill("#watches-question textarea", "Kestrel battery storage")
    page.fill("#watches-schedule textarea", "61 7 * * *")
    page.click("#watches-add")
    wait_text(page, "#watches-status", "malformed")
    assert "e.g." in page.inner_text("#watches-status")
    assert page.input_value("#watches-question textarea") == "Kestrel battery storage"
    assert len(desk.watches(LOCAL)) == 1
    snap(page, "watches-2-refused")

    page.fill("#watches-schedule textarea", "every day at 06:30")
    page.click("#watches-add")
    wait_text(page, "#watches-status", "Added")
    [_, added] = desk.watches(LOCAL)
    wait_text(page, "#watches-table", added["watch_id"])
    assert page.input_value("#watches-question textarea") == ""
    assert "no run yet" in page.inner_text("#watches-table")
    snap(page, "watches-3-added")

    page.get_by_text("every day at 06:30 (UTC)").click()  # a row picks its watch
    page.wait_for_function(
        "(id) => document.querySelector('#watches-pick textarea')?.value === id",
        arg=added["watch_id"],
    )
    page.click("#watches-pause")
    wait_text(page, "#watches-status", f"Paused {added['watch_id']}")
    wait_text(page, "#watches-table", "paused")
    assert desk.show(LOCAL, added["watch_id"])["watch"]["paused"]
    snap(page, "watches-4-paused")
    page.click("#watches-pause")
    wait_text(page, "#watches-status", f"Resumed {added['watch_id']}")
    assert not desk.show(LOCAL, added["watch_id"])["watch"]["paused"]

    page.click("#watches-read")
    wait_text(page, "#watches-status", "Marked 1 read")
    wait_text(page, "#watches-notices", "○ ")
    assert desk.notices(LOCAL, unread=True) == []

    page.click("#watches-remove")
    wait_text(page, "#watches-status", f"Removed {added['watch_id']}")
    page.wait_for_function(
        "(id) => !document.querySelector('#watches-table')?.innerText.includes(id)",
        arg=added["watch_id"],
    )
    assert [w["watch_id"] for w in desk.watches(LOCAL)] == [first]
    snap(page, "watches-5-removed")


@pytest.fixture(scope="module")
def rerun(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A watch run now twice in a row, its pages changed between (dated: old, then today)."""
    base = tmp_path_factory.mktemp("watches-rerun")
    with (
        LoopbackWeb([dated(PLANT, OLD), dated(GRID, OLD)]) as web,
        FakeOllama(ResearchBrain()) as fake,
    ):
        overrides: dict[str, Any] = research_overrides(web, base / "data")
        overrides["system"]["ollama_host"] = fake.url
        overrides["generator"] = {"backend": "ollama"}
        overrides["memory"] = {"enabled": False}
        overrides["research"].update(max_rounds=1)
        agent = Agent(load_settings(overrides=overrides), backend="ollama")
        watch = agent.watches.add(LOCAL, QUESTION, "every Monday 07:00", timezone="Europe/Berlin")
        first = agent.watches.run_now(LOCAL, watch["watch_id"], agent.research)
        since = since_of(agent.watches, watch["watch_id"])
        today = date.today()
        web.pages = {
            p.name: p for p in (dated(PLANT_AFTER, today), dated(GRID, OLD), dated(BATTERY, today))
        }
        second = agent.watches.run_now(LOCAL, watch["watch_id"], agent.research)
        assert first["status"] == second["status"] == "done", (first, second)
        with Served(create_app(agent)) as url:
            yield {"url": url, "watch": watch, "second": second, "since": since}
        agent.close()


def test_a_later_run_shows_it_looked_first_at_what_appeared_since(
    rerun: dict[str, Any], browser: Any
) -> None:
    since = rerun["since"]
    page = open_page(browser, rerun["url"], width=1280, height=900)
    page.get_by_role("tab", name="Watches").click()
    wait_text(page, "#watches-table", rerun["watch"]["watch_id"])
    table = page.inner_text("#watches-table")
    assert f"1 new source, 1 new claim, 1 revised (looked first since {since})" in table, table
    assert "gone" not in table and "no longer" not in table
    wait_text(page, "#watches-notices", rerun["second"]["run_id"])
    notices = page.inner_text("#watches-notices")
    assert f"It looked first at what appeared since {since}." in notices, notices
    shots = Path("/tmp/shots/i57-since")
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "watches-looked-first.png"))
    page.locator("#watches-notices").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "watches-looked-first-notice.png"))
    snap(page, "watches-6-looked-first")
