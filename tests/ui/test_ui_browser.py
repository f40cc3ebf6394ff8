"""The app in a real browser: Debian's chromium driven by Playwright, against the real server.

The agent talks to a fake Ollama over HTTP (``RuleBrain``: it searches the web for "news this
week" questions and thinks out loud), with real memory and the real critic. Screenshots of
each stage go to the run's temp folder (``tests/kit/helpers.py: screenshot_path``); the docs'
pictures are taken by hand with ``docs/images/take_screenshots.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2 import events
from local2.config import load_settings
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, RuleBrain, ScriptBrain
from tests.kit.browser import (
    BROWSER_MARKS,
    NEWS,
    Stack,
    answered,
    app_served,
    ask,
    chat_to_top,
    load_checkpoints,
    make_agent,
    open_page,
    rate,
    resume,
    session_of,
    shot,
    table_rows,
    text_of,
    wait_text,
)
from tests.people.helpers import wait_for

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    fake = FakeOllama(RuleBrain(), chunk_delay_s=0.02).start()
    agent = make_agent(tmp_path_factory.mktemp("ui"), fake.url)
    with app_served(agent) as url:
        yield Stack(url, agent, fake)
    agent.close()
    fake.stop()


def feedback_count(agent: Agent, session: str) -> int:
    log = agent.sessions.state(session).get("event_log") or []
    return sum(e["subject"] == events.USER_FEEDBACK for e in log)


def test_a_question_streams_thinking_a_tool_call_and_the_answer(stack: Stack, browser: Any) -> None:
    page = open_page(browser, stack.url)
    session = session_of(page)
    ask(page, NEWS)
    wait_text(page, "#local2-chat", "Tool: web_search")
    shot(page, "01-streaming")
    wait_text(page, "#local2-critic", "Critic: 4/5")

    chat = text_of(page, "#local2-chat")
    assert "Thinking" in chat and "Tool calls" in chat
    assert f'query="{NEWS}"' in chat  # the tool call's arguments, beside its name
    tool_line = next(line for line in chat.splitlines() if line.startswith(f'query="{NEWS}"'))
    assert re.search(r"\(\d+(\.\d+)?m?s\)$", tool_line), tool_line  # and its duration
    assert "This week in AI: open-weight models" in chat  # the answer
    assert "Critic: 4/5" in chat
    page.locator("#local2-chat [role=button]").filter(has_text="Thinking").first.click()
    wait_text(page, "#local2-chat", "time-sensitive")  # the thinking, opened
    page.click("#local2-chat >> text=Tool: web_search")
    wait_text(page, "#local2-chat", "Result (")  # the tool call, opened
    expanded = text_of(page, "#local2-chat")
    assert "Arguments" in expanded and "news.example.org" in expanded
    shot(page, "02-answer-thinking-tool-call")

    # Rate it with one click: the reward is recorded once, in the session and on the engram,
    # and shown on the answer.
    assert page.is_visible("#local2-memory") and page.is_visible("#local2-rate-5")
    rate(page, 5)
    wait_text(page, "#local2-reward", "Recorded your rating 5/5 (excellent)")
    wait_text(page, "#local2-chat", "Your rating: 5/5 (excellent)")
    [turn] = stack.agent.sessions.history(session)
    assert turn["reward"]["rating"] == 5 and feedback_count(stack.agent, session) == 1
    shot(page, "03-rated")

    # A question that recalls memory: the panel shows the first turn with its reward.
    # (about the question: the answer quoted the search results, which memory does not keep)
    ask(page, "What did I tell you earlier about major AI stories that broke?")
    wait_text(page, "#local2-chat", "Tool: recall_memory")
    wait_text(page, "#local2-memory", "Q: What major AI news")
    wait_text(page, "#local2-critic", "Critic:")
    memory = text_of(page, "#local2-memory")
    row = memory[memory.index("Q: What major AI news") :].split("episodic")[0]
    assert re.search(r"\b0\.\d{1,3}\b", row) and re.search(r"\b5(\.0)?\b", row), row
    page.click("text=Messages the model saw")
    page.click("text=Event log")
    wait_text(page, "#local2-events", "memory.recall")
    prompt = text_of(page, "#local2-prompt")
    assert "recall_memory" in prompt and "What did I tell you earlier" in prompt
    assert "I will call" not in prompt  # thinking is never in what the model is sent
    shot(page, "04-memory-prompt-events")

    # Time travel: fork the first turn with an edited question. It streams like a turn.
    page.click("button[role=tab]:has-text('Time travel')")
    assert page.input_value("#tt-session textarea") == session
    load_checkpoints(page)
    page.click("#tt-turn input")
    page.locator("#tt-turn li[role=option]").filter(has_text="Turn 1").first.click()
    wait_text(page, "#tt-original", "This week in AI")
    assert page.input_value("#tt-edit textarea") == NEWS
    page.fill("#tt-edit textarea", "What is the capital of France?")
    page.click("#tt-fork")
    # a fork is a whole turn (graph, model, critic): on a loaded machine it takes longer
    wait_text(page, "#tt-new", "The capital of France is Paris.", timeout=90_000)
    wait_text(page, "#tt-status", "Forked")
    assert "Thinking" in text_of(page, "#tt-new")
    assert "This week in AI" in text_of(page, "#tt-original")  # the old branch, beside it
    assert "current · new" in text_of(page, "#tt-turns")
    shot(page, "05-time-travel-fork")

    # The Chat tab still shows the branch the person was on, until they switch.
    page.click("button[role=tab]:has-text('Chat')")
    chat = text_of(page, "#local2-chat")
    assert "What did I tell you earlier" in chat and "capital of France" not in chat
    assert page.is_visible("#local2-branch-row")
    assert "earlier branch" in text_of(page, "#local2-session")
    shot(page, "05b-chat-stays-on-its-branch")
    page.click("#local2-switch-branch")
    wait_text(page, "#local2-chat", "The capital of France is Paris.")
    chat = text_of(page, "#local2-chat")
    assert "What did I tell you earlier" not in chat and "Critic:" in chat
    assert not page.is_visible("#local2-branch-row")
    assert "current branch" in text_of(page, "#local2-session")
    page.context.close()


def test_model_picker_offers_what_ollama_has_and_answers_with_the_pick(
    stack: Stack, browser: Any
) -> None:
    page = open_page(browser, stack.url)
    notice = text_of(page, "#local2-notice")
    assert "mock provider: canned example results" in notice  # said once, at the top
    page.click("#local2-model input")
    offered = text_of(page, "#local2-model")
    assert "gemma4:12b — tools, thinking · 131k context · 12B" in offered
    assert "qwen3:4b — tools, thinking" in offered and "nomic-embed-text" not in offered
    shot(page, "06-model-picker")
    page.locator("#local2-model li[role=option]").filter(has_text="qwen3:4b").first.click()
    before = len(stack.fake.chat_requests)
    ask(page, "What is the capital of France?")
    wait_text(page, "#local2-critic", "Critic:")
    assert "Paris" in text_of(page, "#local2-chat")
    answering = {r["model"] for r in stack.fake.chat_requests[before:] if r.get("tools")}
    assert answering == {"qwen3:4b"}  # (the critic keeps its judge)
    assert stack.agent.services.model_name == "gemma4:12b"  # other browsers keep theirs
    page.context.close()


def is_answering(body: dict[str, Any], question: str) -> bool:
    """Whether ``body`` is the model call that answers ``question``: not the critic's grading
    nor memory's fact extraction (a JSON ``format``)."""
    return (
        not body.get("format")
        and question in str((body.get("messages") or [{}])[-1].get("content"))
        and "###Response" not in str(body.get("messages"))
    )


def answering(fake: FakeOllama, question: str, since: float, timeout: float = 10) -> Any:
    """The model call that answered ``question`` after ``since`` (``perf_counter``), once it
    has ended."""
    deadline = time.monotonic() + timeout
    while True:
        with fake.lock:
            served = list(fake.served)
        found = [
            r
            for r in served
            if r.path == "/api/chat" and r.started >= since and is_answering(r.body, question)
        ]
        if found or time.monotonic() > deadline:
            assert len(found) == 1, found
            return found[0]
        time.sleep(0.05)


class Meeting:
    """A brain whose answers to ``questions`` each wait (at most ``timeout_s``) until every
    one of them has been asked: the answers can only be on their way at once, however
    slowly each browser types, if neither turn waits for the other."""

    def __init__(self, brain: Any, questions: tuple[str, ...], timeout_s: float = 30.0) -> None:
        self.brain = brain
        self.timeout_s = timeout_s
        self.asked: dict[str, threading.Event] = {q: threading.Event() for q in questions}

    def __call__(self, request: dict[str, Any]) -> Any:
        for question, asked in self.asked.items():
            if is_answering(request, question) and not asked.is_set():
                asked.set()
                deadline = time.monotonic() + self.timeout_s
                for other in self.asked.values():
                    other.wait(max(0.0, deadline - time.monotonic()))
        return self.brain(request)


def test_two_browser_sessions_are_separate_and_do_not_wait(stack: Stack, browser: Any) -> None:
    first = open_page(browser, stack.url)
    second = open_page(browser, stack.url)
    a, b = session_of(first), session_of(second)
    assert a != b
    questions = ("capital of France", "Python GIL")
    brain = stack.fake.brain
    stack.fake.brain = Meeting(brain, questions)  # each answer waits until both are asked
    since = time.perf_counter()
    try:
        ask(first, "What is the capital of France?")
        ask(second, "What is the Python GIL?")
        seen: dict[str, float] = {}
        started = time.time()
        while len(seen) < 2 and time.time() - started < 60:
            for name, page, needle in (
                ("first", first, "Paris"),
                ("second", second, "Global Interpreter Lock"),
            ):
                if name not in seen and needle in text_of(page, "#local2-chat"):
                    seen[name] = time.time() - started
            time.sleep(0.05)
    finally:
        stack.fake.brain = brain
    assert len(seen) == 2, seen
    # Neither waited for the other: the two answers' model calls were under way at once (had
    # one turn waited, the other's answer would have ended, after the meeting's timeout,
    # before it was asked).
    france, gil = (answering(stack.fake, q, since) for q in questions)
    overlap = min(france.ended, gil.ended) - max(france.started, gil.started)
    assert overlap > 0, f"one answer waited for the other: {seen}, overlap {overlap:.2f} s"
    for page, needle in ((first, "Critic"), (second, "Critic")):
        wait_text(page, "#local2-critic", needle)
    assert "GIL" not in text_of(first, "#local2-chat")
    assert "Paris" not in text_of(second, "#local2-chat")
    first.click("#local2-session-pick input")
    offered = text_of(first, "#local2-session-pick")
    assert a[:8] in offered and b[:8] not in offered  # each browser lists only its own
    shot(first, "06-first-browser")
    shot(second, "06-second-browser")
    for page in (first, second):
        page.context.close()


def test_unreachable_model_and_empty_question_show_clear_notes(
    browser: Any, tmp_path: Path
) -> None:
    agent = make_agent(tmp_path, "http://127.0.0.1:9", memory=None, critic=None)
    with app_served(agent) as url:
        page = open_page(browser, url)
        page.click("#local2-send")
        wait_text(page, "#local2-banner", "empty")
        ask(page, "What is the capital of France?")
        wait_text(page, "#local2-banner", "ollama serve")
        banner = text_of(page, "#local2-banner")
        assert "Cannot reach Ollama" in banner and "Traceback" not in banner
        assert page.input_value("#local2-question textarea") == "What is the capital of France?"
        shot(page, "07-model-unreachable")
        page.context.close()
    agent.close()


def test_memory_says_it_fell_back_and_recalls_a_fact_in_a_new_session(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ollama serves the chat model but not the embedding model, and (as on a machine without
    # the offline model package) MiniLM cannot load: memory falls back to the lexical
    # embedder and the app says so, instead of switching memory off.
    monkeypatch.setattr("local2.memory._embedders.minilm_available", lambda: False)
    with FakeOllama(RuleBrain(), models=["gemma4:12b"]) as fake:
        settings = load_settings(
            overrides={
                "system": {"ollama_host": fake.url, "data_dir": str(tmp_path)},
                "generator": {"backend": "ollama"},
                "memory": {"embedder": "ollama"},
            }
        )
        agent = Agent(settings, backend="ollama", critic=None)
        with app_served(agent) as url:
            page = open_page(browser, url)
            notice = text_of(page, "#local2-notice")
            assert "fallback embedder lexical-hash-512" in notice and "ollama serve" in notice
            ask(page, "Remember that my sister's name is Ines.")
            # the save is the reply; the turn over, New session is live again
            answered(page, "Saved to memory: The user's sister's name is Ines.")
            page.click("text=New session")
            page.wait_for_function(
                "document.querySelector('#local2-chat')?.innerText.indexOf('Ines') === -1"
            )
            ask(page, "What is my sister's name?")
            wait_text(page, "#local2-chat", "Your sister's name is Ines")
            wait_text(page, "#local2-memory", "The user's sister's name is Ines.")
            assert "fact" in text_of(page, "#local2-memory")
            shot(page, "08-memory-fallback-fact-recalled")
            page.context.close()
        agent.close()


def test_api_alone_serves_no_app(stack: Stack, tmp_path: Path) -> None:
    agent = make_agent(tmp_path, stack.fake.url, memory=None, critic=None)
    with app_served(agent, ui=False) as url:
        assert httpx.get(f"{url}/health").json()["status"] == "ok"
        assert httpx.get(f"{url}/").status_code == 404
    agent.close()


def test_local2_ui_command_opens_app_and_api(stack: Stack, tmp_path: Path) -> None:
    env = {**os.environ, "LOCAL2_HOME": str(tmp_path / "home"), "OLLAMA_HOST": stack.fake.url}
    env.pop("LOCAL2_API_TOKEN", None)
    refused = subprocess.run(
        [sys.executable, "-m", "local2.cli", "ui", "--host", "0.0.0.0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "LOCAL2_API_TOKEN" in refused.stderr

    proc = subprocess.Popen(
        [sys.executable, "-m", "local2.cli", "ui", "--port", "0", "--backend", "ollama"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"on (http://127\.0\.0\.1:\d+)/", line)
        assert match, f"no address in {line!r}; stderr: {proc.stderr.read() if proc.poll() else ''}"
        url = match.group(1)
        page = httpx.get(f"{url}/", timeout=30)
        assert page.status_code == 200 and "gradio" in page.text.lower()
        with httpx.Client(base_url=url, timeout=60) as client:
            assert client.get("/health").json()["backend"] == "ollama"
            answer = client.post("/query", json={"query": "What is the capital of France?"})
            assert "Paris" in answer.json()["answer"]
    finally:
        proc.terminate()
        proc.wait(20)


def test_stop_ends_a_running_turn_with_nothing_recorded(stack: Stack, browser: Any) -> None:
    page = open_page(browser, stack.url)
    session = session_of(page)
    ask(page, "What is the capital of France?")
    answered(page, "Paris")
    stack.fake.chunk_delay_s = 0.4  # words now arrive slowly: there is time to press Stop
    try:
        ask(page, "Tell me about the Python GIL.")
        wait_text(page, "#local2-chat", "The Python GIL")  # part of the answer is on screen
        # A second question while this one runs is refused, visibly, and kept in the box.
        ask(page, "And one more thing?")
        wait_text(page, "#local2-banner", "Still answering your previous question")
        assert page.input_value("#local2-question textarea") == "And one more thing?"
        page.click("#local2-stop")
        wait_text(page, "#local2-chat", "you pressed Stop")
    finally:
        stack.fake.chunk_delay_s = 0.02
    chat = text_of(page, "#local2-chat")
    assert "Abandoned: this answer was cut off" in chat
    assert "Global Interpreter Lock) is a mutex" not in chat  # it never finished
    assert page.input_value("#local2-question textarea") == "Tell me about the Python GIL."
    shot(page, "08-stopped")
    # Nothing was recorded: the history and the head are the first turn's.
    assert [t["user"] for t in stack.agent.sessions.history(session)] == [
        "What is the capital of France?"
    ]
    # The abandoned mark is written as the turn unwinds, maybe after the screen says so.
    wait_for(
        lambda: any(r["abandoned"] for r in stack.agent.sessions.checkpoints(session, 100)),
        "an abandoned checkpoint",
        timeout=30,
    )
    rows = stack.agent.sessions.checkpoints(session, 100)
    assert not any(r["current"] and "GIL" in r["summary"] for r in rows)
    # The next question continues from the first turn, and the stopped one cannot be rated.
    ask(page, NEWS)
    answered(page, "This week in AI")
    assert [t["user"] for t in stack.agent.sessions.history(session)][-1] == NEWS
    page.context.close()


def test_each_rating_control_writes_one_record(stack: Stack, browser: Any) -> None:
    page = open_page(browser, stack.url)
    session = session_of(page)
    ask(page, "What is the capital of France?")
    answered(page, "Paris")
    ask(page, "What is the Python GIL?")
    answered(page, "Global Interpreter Lock")
    first, second = (t["query_id"] for t in stack.agent.sessions.history(session))

    # The buttons rate the last answer: one click, one record; the same again, none.
    rate(page, 4)
    wait_text(page, "#local2-reward", "Recorded your rating 4/5 (good)")
    assert feedback_count(stack.agent, session) == 1
    rate(page, 4)
    wait_text(page, "#local2-reward", "already rated 4/5")
    assert feedback_count(stack.agent, session) == 1

    # Clicking an earlier answer picks it; re-rating it later replaces, and says so.
    page.click("#local2-chat >> text=The capital of France is Paris.")
    wait_text(page, "#local2-rate-label", "Rate the answer to “What is the capital of France?”")
    rate(page, 2)
    wait_text(page, "#local2-reward", "Recorded your rating 2/5 (poor)")
    rate(page, 5)
    wait_text(page, "#local2-reward", "Changed your rating of this answer from 2/5 to 5/5")
    assert feedback_count(stack.agent, session) == 3
    ratings = {
        t["query_id"]: t["rating"]["rating"]
        for t in stack.agent.sessions.history(session, detail=True)
    }
    assert ratings == {first: 5, second: 4}
    chat = text_of(page, "#local2-chat")
    assert chat.count("Your rating: ") == 2 and "Your rating: 2/5" not in chat
    shot(page, "09-ratings")
    page.context.close()


def test_a_resumed_session_shows_every_turn_as_it_was(stack: Stack, browser: Any) -> None:
    page = open_page(browser, stack.url)
    session = session_of(page)
    ask(page, NEWS)
    answered(page, "This week in AI")
    rate(page, 4)
    wait_text(page, "#local2-reward", "Recorded your rating 4/5")

    # Another tab of the same browser, busy with its own session, resumes the first one.
    other = page.context.new_page()
    other.set_default_timeout(30_000)
    other.goto(stack.url)
    other.wait_for_selector("#local2-question textarea")
    ask(other, "What is the capital of France?")
    answered(other, "Paris")
    rate(other, 2)
    wait_text(other, "#local2-reward", "Recorded your rating 2/5")
    resume(other, session)
    wait_text(other, "#local2-chat", "Tool: web_search")
    chat = text_of(other, "#local2-chat")
    assert "Paris" not in chat and "Thinking" in chat and "Tool calls" in chat
    assert "Critic: 4/5" in chat and "Your rating: 4/5 (good)" in chat
    assert text_of(other, "#local2-reward").strip() == ""  # the other session's is gone
    assert "Critic: 4/5" in text_of(other, "#local2-critic")
    assert NEWS in text_of(other, "#local2-rate-label")
    other.set_viewport_size({"width": 1280, "height": 800})
    other.click("#local2-chat >> text=Tool: web_search")
    wait_text(other, "#local2-chat", "Result (")  # the tool card opens on its result
    chat_to_top(other)
    shot(other, "resumed-session-1280-wide")
    page.context.close()

    narrow = open_page(browser, stack.url, width=390, height=844)
    resume(narrow, session)
    wait_text(narrow, "#local2-chat", "Tool: web_search")
    chat_to_top(narrow)
    shot(narrow, "resumed-session-390-wide", full_page=True)
    narrow.context.close()


def test_first_view_shows_the_top_and_tables_are_readable_on_a_phone(
    stack: Stack, browser: Any, tmp_path: Path
) -> None:
    notice = "Ollama did not answer, so the embedded demo model answers (a weak demo model)."
    agent = make_agent(tmp_path, stack.fake.url, memory=None, critic=None)
    agent.notices = [notice]  # as the embedded fallback sets it
    with app_served(agent) as url:
        page = open_page(browser, url, width=1280, height=800)
        time.sleep(1.0)  # anything that would scroll (autofocus) has happened by now
        assert page.evaluate("window.scrollY") == 0
        for selector in ("#local2-header h2", "#local2-header p", "#local2-notice"):
            box = page.locator(selector).bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= 800, selector
        header = text_of(page, "#local2-header")
        assert "LoCAL2" in header and agent.services.model_name in header
        focused = page.evaluate("document.activeElement?.closest('#local2-question') !== null")
        assert focused  # still ready to type
        shot(page, "first-view-1280-wide")
        page.context.close()

        phone = open_page(browser, url, width=390, height=844)
        assert phone.evaluate("window.scrollY") == 0
        shot(phone, "first-view-390-wide", full_page=True)
        ask(phone, "What is the capital of France?")
        wait_text(phone, "#local2-chat", "Paris")
        headers = phone.locator("#local2-memory th span.header")
        assert headers.count() == 6
        heights = [headers.nth(i).bounding_box()["height"] for i in range(6)]
        assert max(heights) < 1.6 * min(heights), heights  # no header wraps letter by letter
        phone.click("button[role=tab]:has-text('Time travel')")
        load_checkpoints(phone)
        phone.click("#tt-details button")
        first_id = phone.locator("#tt-checkpoints .body-cell.first-column").first
        box = first_id.bounding_box()
        assert box and box["width"] >= 200  # a checkpoint id is readable, the table scrolls
        assert len(first_id.inner_text().strip()) >= 30
        shot(phone, "10-time-travel-390-wide")
        phone.context.close()
    agent.close()


def test_a_replay_streams_tool_cards_on_its_own_clock(stack: Stack, browser: Any) -> None:
    page = open_page(browser, stack.url)
    session = session_of(page)
    ask(page, NEWS)
    answered(page, "This week in AI")
    time.sleep(2.0)  # so the original question's clock would show
    page.click("button[role=tab]:has-text('Time travel')")
    load_checkpoints(page)
    wait_text(page, "#tt-original", "This week in AI")  # its one turn, picked
    started = time.monotonic()
    page.click("#tt-replay")
    wait_text(page, "#tt-new", "Tool: web_search")  # the tool card, while it streams
    wait_text(page, "#tt-status", "Replayed")
    took = time.monotonic() - started
    assert "This week in AI" in text_of(page, "#tt-new")
    page.click("button[role=tab]:has-text('Chat')")
    page.click("#local2-switch-branch")
    page.click("text=Event log")
    wait_text(page, "#local2-events", events.REPLAY_STARTED)
    page.wait_for_selector("#local2-events .body-cell")
    rows = table_rows(page, "#local2-events")
    times = [float(row[0]) for row in rows]
    subjects = [row[1] for row in rows]
    assert subjects[0] == events.REPLAY_STARTED and times[0] == 0
    assert times == sorted(times) and max(times) < took  # counted from the replay's start
    [turn] = stack.agent.sessions.history(session)
    assert turn["user"] == NEWS
    shot(page, "11-replay-clock")
    page.context.close()


def test_the_bubble_keeps_what_is_recorded_not_what_streamed(browser: Any, tmp_path: Path) -> None:
    """A reply the answer guard cleans (a real SmolLM2 reply ending in a copied recall
    listing) streams into the bubble as it comes; once recorded, the bubble shows the answer
    as kept, with nothing of the listing left."""
    echo = json.loads(
        (Path(__file__).parents[1] / "fixtures" / "embedded_run" / "listing_echo.json").read_text()
    )
    with FakeOllama(ScriptBrain([echo["reply"]]), chunk_delay_s=0.1) as fake:
        agent = make_agent(tmp_path / "data", fake.url, memory=None, critic=None)
        with app_served(agent) as url:
            page = open_page(browser, url)
            ask(page, "Who is Ines?")
            wait_text(page, "#local2-chat", "similarity 0.62")  # streamed as it came...
            answered(page, "The user's sister's name is Ines.")
            page.wait_for_function(  # ...and replaced by the answer as recorded
                "!(document.querySelector('#local2-chat')?.innerText || '').includes('similarity')"
            )
            session = session_of(page)
            page.context.close()
        (turn,) = agent.sessions.history(session)
        agent.close()
    assert turn["assistant"].startswith("The user's sister's name is Ines.")
    assert "similarity" not in turn["assistant"]
