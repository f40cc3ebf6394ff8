"""What a newcomer meets first, in a real browser (Debian's chromium, Playwright) against the
real server: the question box is on the first screen at 1280x900 and on a phone (390x844),
and stays there after an answer; the side panels' tables show every column (or scroll
sideways where they cannot); a rating is confirmed in plain words; with the critic off a
compared pair says it is not graded and why, and so does the Arena.

The page has what a fresh machine's has above the chat: the embedded fallback's two notices
(their text as ``wire`` writes it) and the model picker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.browser import (
    BROWSER_MARKS,
    NEWS,
    answered,
    app_served,
    make_agent,
    open_page,
    rate,
    shot,
    text_of,
    wait_text,
)

pytestmark = BROWSER_MARKS

NOTICES = [  # as the embedded fallback words them (service/wiring.py)
    "Using the embedded demo model (smollm2-135m-instruct: a tiny model with weak answers). "
    "Cannot reach Ollama at http://127.0.0.1:11434. For a real model: start Ollama with "
    "`ollama serve` and run `ollama pull gemma4:12b`.",
    "The critic is off with the embedded demo model, which cannot grade answers reliably. To "
    "grade them, set `critic.model` to an Ollama judge (or `critic.grade_embedded: true`).",
]
SIZES = [(1280, 900), (390, 844)]
TABLES = ["#local2-memory", "#local2-document-hits", "#local2-events"]
INTERNALS = ["→", "engram", "user.feedback", "reward.event", "`"]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(RuleBrain(), chunk_delay_s=0.01) as server:
        yield server


@pytest.fixture(scope="module")
def app(fake: FakeOllama, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app with the critic off, as the embedded model runs it, and its notices."""
    agent = make_agent(tmp_path_factory.mktemp("newcomer"), fake.url, critic=None)
    agent.notices = list(NOTICES)
    with app_served(agent) as url:
        yield url
    agent.close()


def in_view(page: Any, selector: str) -> bool:
    """Whether the element is wholly inside the viewport, as the page is scrolled now."""
    box = page.locator(selector).bounding_box()
    height = page.viewport_size["height"]
    return bool(box) and box["y"] >= 0 and box["y"] + box["height"] <= height


def ask_by_keyboard(page: Any, question: str) -> None:
    """Type and press Enter, as a person does (a click would scroll the page for us)."""
    page.locator("#local2-question textarea").focus()
    page.keyboard.type(question)
    page.keyboard.press("Enter")


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_question_box_is_on_the_first_screen_and_stays_there_after_an_answer(
    app: str, browser: Any, width: int, height: int
) -> None:
    page = open_page(browser, app, width=width, height=height)
    page.wait_for_timeout(800)  # anything that would scroll (autofocus) has happened
    assert page.evaluate("window.scrollY") == 0
    assert in_view(page, "#local2-question"), page.locator("#local2-question").bounding_box()
    assert in_view(page, "#local2-send")
    assert in_view(page, "#local2-notice")  # the notices are read before the question
    shot(page, f"newcomer-first-view-{width}")
    ask_by_keyboard(page, NEWS)  # a tool card and a long answer
    answered(page, "This week in AI")
    page.wait_for_timeout(500)
    assert in_view(page, "#local2-question"), page.locator("#local2-question").bounding_box()
    shot(page, f"newcomer-answered-{width}")
    page.context.close()


def header_cut_off(page: Any, selector: str) -> list[str]:
    """The headers of a table whose text runs past their cell or out of the table's view."""
    return page.evaluate(
        """(sel) => {
            const view = document.querySelector(sel + ' .virtual-table-viewport')
                || document.querySelector(sel + ' .table-wrap');
            const right = view.getBoundingClientRect().right + 1;
            return [...document.querySelectorAll(sel + ' th')].filter(th => {
                const span = th.querySelector('span.header') || th;
                return span.scrollWidth > th.clientWidth + 1
                    || th.getBoundingClientRect().right > right;
            }).map(th => th.innerText.trim());
        }""",
        selector,
    )


def scrolls_sideways(page: Any, selector: str) -> bool:
    """Whether the table's view scrolls sideways with a full-width scroll bar (Gradio's own
    is a thin one in a see-through track). Playwright's chromium hides every scroll bar, so
    the bar's style is what can be checked here."""
    return page.evaluate(
        """(sel) => {
            const view = document.querySelector(sel + ' .virtual-table-viewport');
            const style = getComputedStyle(view);
            return view.scrollWidth > view.clientWidth + 1
                && (style.overflowX === 'auto' || style.overflowX === 'scroll')
                && style.scrollbarWidth === 'auto';
        }""",
        selector,
    )


def test_side_tables_show_every_column_or_scroll(app: str, browser: Any) -> None:
    page = open_page(browser, app, width=1280, height=900)
    ask_by_keyboard(page, "What is the capital of France?")
    answered(page, "Paris")
    page.locator("button:has-text('Event log')").click()
    page.wait_for_selector("#local2-events th")
    for table in TABLES:  # at 1280 wide, each fits its panel: no column cut off
        assert header_cut_off(page, table) == [], table
    shot(page, "newcomer-tables-1280", full_page=True)
    page.context.close()

    phone = open_page(browser, app, width=390, height=844)
    for table in ["#local2-memory", "#local2-document-hits"]:
        cut = header_cut_off(phone, table)
        assert cut == [] or scrolls_sideways(phone, table), (table, cut)
    phone.context.close()


def test_a_rating_is_confirmed_in_plain_words(app: str, browser: Any) -> None:
    page = open_page(browser, app, width=1280, height=900)
    ask_by_keyboard(page, "What is the capital of France?")
    answered(page, "Paris")
    rate(page, 4)
    wait_text(page, "#local2-reward", "Recorded your rating 4/5 (good) for this answer.")
    said = text_of(page, "#local2-reward")
    assert not [word for word in INTERNALS if word in said], said
    assert re.search(r"\bmemory\b", said, re.I), said  # what memory does with it, in words
    rate(page, 2)
    wait_text(page, "#local2-reward", "Changed your rating of this answer from 4/5 to 2/5")
    said = text_of(page, "#local2-reward")
    assert not [word for word in INTERNALS if word in said], said
    page.context.close()


def test_with_the_critic_off_compare_and_arena_say_not_graded_and_why(
    app: str, browser: Any
) -> None:
    page = open_page(browser, app, width=1280, height=900)
    page.locator("#local2-compare-row input[type=checkbox]").first.check()
    ask_by_keyboard(page, "What is the capital of France?")
    answered(page, "Paris")
    wait_text(page, "#local2-verdict", "not graded: the critic is off")
    page.wait_for_timeout(1500)  # nothing is coming later: the words stay
    for side in ("#local2-answer-a", "#local2-answer-b"):
        card = text_of(page, side)
        assert "not graded: the critic is off" in card and "grading" not in card, card
    verdict = text_of(page, "#local2-verdict")
    assert "not judged" not in verdict and "asked twice" not in verdict, verdict
    assert page.locator("#local2-prefer-a").is_enabled()  # a person may still vote
    shot(page, "newcomer-compare-critic-off")
    page.click("button[role=tab]:has-text('Arena')")
    wait_text(page, "#arena-judge-about", "Not graded: the critic is off")
    page.context.close()


def test_the_start_notices_show_once_with_no_dead_address_to_click(
    browser: Any, tmp_path: Path
) -> None:
    """The picker does not repeat what a notice says; the notice's address is not a link."""
    dead = "http://127.0.0.1:9"  # nothing listens there: the picker finds no Ollama either
    agent: Agent = make_agent(tmp_path, dead, memory=None, critic=None)
    agent.notices = [NOTICES[0].replace("http://127.0.0.1:11434", dead)]
    with app_served(agent) as url:
        page = open_page(browser, url, width=1280, height=900)
        notice = text_of(page, "#local2-notice")
        assert notice.count("Cannot reach Ollama") == 1
        assert page.locator("#local2-notice a").count() == 0
        assert dead in text_of(page, "#local2-notice code")
        body = page.inner_text("body")
        assert body.count("Cannot reach Ollama") == 1, body[:600]
        page.context.close()
    agent.close()


def shown_ids(page: Any, ids: list[str]) -> list[str]:
    """Which of the elements (by id) a person sees: laid out, not hidden by a class."""
    return [i for i in ids if page.locator(f"#{i}").is_visible()]


def test_empty_library_and_evaluate_offer_only_what_applies(app: str, browser: Any) -> None:
    """A fresh machine: nothing kept, no eval run. The Library tab says how things get in
    and offers no Open, Pin, Remove or Export; the Evaluate tab offers Run, not Stop (no run
    going) nor Resume (nothing picked)."""
    page = open_page(browser, app, width=1280, height=900)
    page.get_by_role("tab", name="Library").click()
    wait_text(page, "#library-status", "Nothing kept yet")
    assert "research run" in text_of(page, "#library-status")  # how things get in
    library = ["library-open", "library-pin", "library-remove", "library-export"]
    assert page.locator("#library-search").is_visible()
    assert shown_ids(page, library) == []
    shot(page, "newcomer-library-empty")
    page.get_by_role("tab", name="Evaluate").click()
    page.wait_for_selector("#eval-run", state="visible")
    page.wait_for_timeout(500)  # the tab's listing has come back
    assert shown_ids(page, ["eval-run", "eval-stop", "eval-resume"]) == ["eval-run"]
    shot(page, "newcomer-evaluate-empty")
    page.context.close()
