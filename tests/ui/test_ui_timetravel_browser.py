"""The Time travel tab in a real browser (Debian's chromium via Playwright, the real Gradio
server, real ``ChatOllama`` against the test kit's Ollama-protocol server), as a person uses
it: a four-turn session, its turns picked by question, one forked.

- each pane shows the answer that belongs to its question (the Original branch pane once
  showed turn 2's question with turn 1's answer);
- the picker lists turns by question, not thirty checkpoints named by the graph's steps;
- opening another session clears what the panes showed of the last one.

Screenshots go to the run's temp folder (tests/kit/browser.py: shot), never into the repository.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from local2_testkit.brains import Reply, last_user_index, message_text
from local2_testkit.ollama_server import FakeOllama
from tests.kit.browser import (
    BROWSER_MARKS,
    Stack,
    app_served,
    ask,
    make_agent,
    open_page,
    resume,
    session_of,
    shot,
    table_rows,
    text_of,
    wait_text,
)

pytestmark = BROWSER_MARKS

ANSWERS = {  # a conversation about one city, each answer its question's own
    "What is the capital of France?": "The capital of France is Paris.",
    "What river flows through it?": "The Seine flows through Paris.",
    "How long is that river?": "The Seine is about 777 km long.",
    "Name a bridge over it.": "The Pont Neuf crosses the Seine.",
    "Which sea does the Seine flow into?": "The Seine flows into the English Channel.",
    "What is the capital of Italy?": "The capital of Italy is Rome.",
}
QUESTIONS = list(ANSWERS)[:4]
FORKED = "Which sea does the Seine flow into?"


def geography(request: dict[str, Any]) -> Reply:
    """Answers the last question from :data:`ANSWERS`, thinking first (it streams)."""
    messages = list(request.get("messages") or [])
    asked = message_text(messages[last_user_index(messages)]).strip()
    return Reply(
        thinking=f"The person asks: {asked}",
        content=ANSWERS.get(asked, f"I do not know about: {asked}"),
    )


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    fake = FakeOllama(geography, chunk_delay_s=0.01).start()
    agent = make_agent(tmp_path_factory.mktemp("tt"), fake.url, memory=None, critic=None)
    with app_served(agent) as url:
        yield Stack(url, agent, fake)
    agent.close()
    fake.stop()


def answered(page: Any, needle: str) -> None:
    wait_text(page, "#local2-chat", needle)
    page.wait_for_selector("#local2-send:not([disabled])")
    page.wait_for_selector("#local2-rate-1:not([disabled])")


def open_time_travel(page: Any, needle: str) -> None:
    """Open the tab: it loads the Chat tab's session by itself (a press of Load turns, once
    more, if the first load came before the tab's parts had mounted)."""
    page.click("button[role=tab]:has-text('Time travel')")
    try:
        wait_text(page, "#tt-status", needle, timeout=10_000)
    except AssertionError:
        page.click("#tt-load")
        wait_text(page, "#tt-status", needle)


def pick_turn(page: Any, label: str) -> list[str]:
    """Pick a turn in the picker; returns every option it offered."""
    page.click("#tt-turn input")
    options = page.locator("#tt-turn li[role=option]")
    # (the picked one is ticked: "✓" before its label)
    offered = [options.nth(i).inner_text().strip("✓ \n") for i in range(options.count())]
    options.filter(has_text=label).first.click()
    return offered


def test_a_forks_panes_show_their_own_turns_and_the_picker_lists_questions(
    stack: Stack, browser: Any
) -> None:
    page = open_page(browser, stack.url, width=1280, height=900)
    session = session_of(page)
    for question in QUESTIONS:
        ask(page, question)
        answered(page, ANSWERS[question])
    checkpoints = stack.agent.sessions.checkpoints(session, limit=1000)
    assert len(checkpoints) >= 4 * 6  # what the picker used to list, one by one

    open_time_travel(page, "4 turn(s)")
    assert table_rows(page, "#tt-turns") == [
        [f"Turn {n}", q, ANSWERS[q], "current"] for n, q in enumerate(QUESTIONS, 1)
    ]
    # The newest turn is picked, its own question and answer beside it.
    wait_text(page, "#tt-original", ANSWERS[QUESTIONS[3]])
    shot(page, "timetravel-01-turns-loaded", full_page=True)

    offered = pick_turn(page, "Turn 2")
    assert offered == [f"Turn {n} · {q}" for n, q in enumerate(QUESTIONS, 1)]
    internal = re.compile(r"__start__|\breceive\b|critique|ingest|\bstep\b")
    assert not any(internal.search(label) for label in offered)
    wait_text(page, "#tt-original", ANSWERS[QUESTIONS[1]])
    original = text_of(page, "#tt-original")
    assert QUESTIONS[1] in original and "Turn 2" in original
    assert ANSWERS[QUESTIONS[0]] not in original  # not the turn before's answer
    assert page.input_value("#tt-edit textarea") == QUESTIONS[1]
    shot(page, "timetravel-02-turn-2-picked", full_page=True)

    # The steps inside the turn are in the details, and only that turn's.
    page.click("#tt-details button")
    page.click("#tt-pick input")
    steps = page.locator("#tt-pick li[role=option]")
    labels = [steps.nth(i).inner_text() for i in range(steps.count())]
    assert len(labels) == len(stack.agent.sessions.checkpoint_turns(session)[1]["checkpoints"])
    assert any("after receive" in label for label in labels)
    steps.filter(has_text="after receive").first.click()
    wait_text(page, "#tt-state", QUESTIONS[1])  # the state at that step
    shot(page, "timetravel-03-details", full_page=True)
    page.click("#tt-details button")  # closed again

    page.fill("#tt-edit textarea", FORKED)
    page.click("#tt-fork")
    wait_text(page, "#tt-new", ANSWERS[FORKED])
    wait_text(page, "#tt-status", "Forked")
    new = text_of(page, "#tt-new")
    assert FORKED in new and "Thinking" in new
    assert ANSWERS[QUESTIONS[1]] not in new and ANSWERS[QUESTIONS[0]] not in new
    wait_text(page, "#tt-original", "on another branch")  # the turn forked, as it was
    original = text_of(page, "#tt-original")
    assert QUESTIONS[1] in original and ANSWERS[QUESTIONS[1]] in original
    assert ANSWERS[QUESTIONS[0]] not in original and FORKED not in original
    assert "Turn 2 (fork)" in text_of(page, "#tt-new-note")
    rows = table_rows(page, "#tt-turns")
    assert rows[1:3] == [
        ["Turn 2", QUESTIONS[1], ANSWERS[QUESTIONS[1]], "other"],
        ["Turn 2 (fork)", FORKED, ANSWERS[FORKED], "current · new"],
    ]
    shot(page, "timetravel-04-forked", full_page=True)
    page.click("#tt-details button")  # the turn's own steps, now mostly on the other branch
    wait_text(page, "#tt-checkpoints", "other")
    page.click("#tt-details button")

    # Replay this turn (turn 2, still picked): the same question, its own answer again.
    page.click("#tt-replay")
    wait_text(page, "#tt-status", "Replayed")
    new = text_of(page, "#tt-new")
    assert QUESTIONS[1] in new and ANSWERS[QUESTIONS[1]] in new and FORKED not in new
    assert "Turn 2 (replay)" in text_of(page, "#tt-new-note")
    assert ["Turn 2 (replay)", QUESTIONS[1], ANSWERS[QUESTIONS[1]], "current · new"] in (
        table_rows(page, "#tt-turns")
    )
    assert ANSWERS[QUESTIONS[0]] not in text_of(page, "#tt-original")
    shot(page, "timetravel-05-replayed", full_page=True)

    # The fork, picked by a click on its row, shows its own answer on the left too.
    page.locator("#tt-turns .body-cell").filter(has_text=FORKED).first.click()
    wait_text(page, "#tt-original", ANSWERS[FORKED])
    assert ANSWERS[QUESTIONS[1]] not in text_of(page, "#tt-original")
    assert page.input_value("#tt-edit textarea") == FORKED
    assert "Turn 2 (fork)" in page.input_value("#tt-turn input")
    page.context.close()


def test_opening_another_session_clears_the_panes(stack: Stack, browser: Any) -> None:
    other = "tt-browser-other"
    stack.agent.turns.ask("What is the capital of Italy?", other)
    page = open_page(browser, stack.url, width=1280, height=900)
    ask(page, QUESTIONS[0])
    answered(page, ANSWERS[QUESTIONS[0]])
    open_time_travel(page, "1 turn(s)")
    page.fill("#tt-edit textarea", "What is the capital of Italy?")
    page.click("#tt-fork")
    wait_text(page, "#tt-new", ANSWERS["What is the capital of Italy?"])
    wait_text(page, "#tt-status", "Forked")

    # Another session, resumed in the Chat tab: the Time travel tab follows, nothing of the
    # fork stays on screen.
    page.click("button[role=tab]:has-text('Chat')")
    resume(page, other)
    wait_text(page, "#local2-chat", "Rome")
    open_time_travel(page, f"1 turn(s) in session {other}")
    assert page.input_value("#tt-session textarea") == other
    wait_text(page, "#tt-original", "The capital of Italy is Rome.")
    assert "France" not in text_of(page, "#tt-new") and "Rome" not in text_of(page, "#tt-new")
    assert "Forked" not in text_of(page, "#tt-new-note")
    assert table_rows(page, "#tt-turns") == [
        ["Turn 1", "What is the capital of Italy?", "The capital of Italy is Rome.", "current"]
    ]
    shot(page, "timetravel-06-other-session", full_page=True)

    # A new, empty session: nothing to pick, nothing shown.
    page.click("button[role=tab]:has-text('Chat')")
    page.click("button:has-text('New session')")
    page.wait_for_function(
        "(old) => document.querySelector('#local2-session code')?.innerText.trim() !== old",
        arg=other,
    )
    open_time_travel(page, "No turns in session")
    assert text_of(page, "#tt-original").strip() == ""
    assert "Rome" not in text_of(page, "#tt-new")
    assert table_rows(page, "#tt-turns") == []
    shot(page, "timetravel-07-new-session", full_page=True)
    page.context.close()
