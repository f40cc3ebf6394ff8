"""The app in a real browser: Debian's chromium driven by Playwright, against the real server.

The agent talks to a fake Ollama over HTTP (``RuleBrain``: it searches the web for "news this
week" questions and thinks out loud), with real memory and the real critic. Screenshots of
each stage go to ``artifacts/screenshots/``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2.agent import Agent
from local2.config import load_settings
from local2.testing.ollama_server import FakeOllama, RuleBrain
from local2.ui.server import create_app
from tests.test_api import Served

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
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

pytestmark = [
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
        }
    )
    return Agent(settings, backend="ollama", **kwargs)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    fake = FakeOllama(RuleBrain(), chunk_delay_s=0.02).start()
    agent = make_agent(tmp_path_factory.mktemp("ui"), fake.url)
    with Served(create_app(agent)) as url:
        yield Stack(url, agent, fake)
    agent.close()
    fake.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        yield chromium
        chromium.close()


def open_page(browser: Any, url: str) -> Any:
    context = browser.new_context(viewport={"width": 1500, "height": 1250})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url)
    page.wait_for_selector("#local2-question textarea")
    page.wait_for_function("document.querySelector('#local2-session code')?.innerText.length > 8")
    return page


def shot(page: Any, name: str) -> None:
    # Not full_page: resizing the viewport re-renders the chat and closes opened sections.
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def text_of(page: Any, selector: str) -> str:
    return page.inner_text(selector)


def wait_text(page: Any, selector: str, needle: str, timeout: float = 30_000) -> None:
    page.wait_for_function(
        "([sel, needle]) => (document.querySelector(sel)?.innerText || '').includes(needle)",
        arg=[selector, needle],
        timeout=timeout,
    )


def ask(page: Any, question: str) -> None:
    page.fill("#local2-question textarea", question)
    page.click("#local2-send")


def session_of(page: Any) -> str:
    return text_of(page, "#local2-session code").strip()


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
    assert page.is_visible("#local2-memory") and page.is_visible("#local2-rating-choice")
    shot(page, "02-answer-thinking-tool-call")

    # Rate it: the reward is recorded in the session and on the memory engram.
    page.click("#local2-rating-choice label:has-text('5')")
    page.click("#local2-rate")
    wait_text(page, "#local2-reward", "Recorded reward 5/5")
    [turn] = stack.agent.history(session)
    assert turn["reward"]["rating"] == 5
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

    # Time travel: fork the first turn with an edited question.
    page.click("button[role=tab]:has-text('Time travel')")
    assert page.input_value("#tt-session textarea") == session
    page.click("#tt-load")
    wait_text(page, "#tt-status", "checkpoint(s)")
    page.click("#tt-pick input")
    page.locator("#tt-pick li[role=option]").filter(has_text="after receive").filter(
        has_text="What major AI news"
    ).first.click()
    wait_text(page, "#tt-original", "This week in AI")
    assert page.input_value("#tt-edit textarea") == NEWS
    page.fill("#tt-edit textarea", "What is the capital of France?")
    page.click("#tt-fork")
    wait_text(page, "#tt-new", "The capital of France is Paris.")
    assert "This week in AI" in text_of(page, "#tt-original")  # the old branch, beside it
    assert "new" in text_of(page, "#tt-checkpoints").split()
    shot(page, "05-time-travel-fork")
    page.context.close()


def test_two_browser_sessions_are_separate_and_do_not_wait(stack: Stack, browser: Any) -> None:
    first = open_page(browser, stack.url)
    second = open_page(browser, stack.url)
    a, b = session_of(first), session_of(second)
    assert a != b
    stack.fake.delay_s = 1.5  # every model reply takes 1.5 s: waiting would show
    try:
        ask(first, "What is the capital of France?")
        ask(second, "What is the Python GIL?")
        seen: dict[str, float] = {}
        started = time.time()
        while len(seen) < 2 and time.time() - started < 30:
            for name, page, needle in (
                ("first", first, "Paris"),
                ("second", second, "Global Interpreter Lock"),
            ):
                if name not in seen and needle in text_of(page, "#local2-chat"):
                    seen[name] = time.time() - started
            time.sleep(0.05)
    finally:
        stack.fake.delay_s = 0.0
    assert len(seen) == 2, seen
    assert abs(seen["first"] - seen["second"]) < 1.4, f"one answer waited for the other: {seen}"
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
    with Served(create_app(agent)) as url:
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
    monkeypatch.setattr("local2.memory.fallback.minilm_available", lambda: False)
    with FakeOllama(RuleBrain(), models=["qwen3:4b"]) as fake:
        settings = load_settings(
            overrides={
                "system": {"ollama_host": fake.url, "data_dir": str(tmp_path)},
                "generator": {"backend": "ollama"},
                "memory": {"embedder": "ollama"},
            }
        )
        agent = Agent(settings, backend="ollama", critic=None)
        with Served(create_app(agent)) as url:
            page = open_page(browser, url)
            notice = text_of(page, "#local2-notice")
            assert "fallback embedder lexical-hash-512" in notice and "ollama serve" in notice
            ask(page, "Remember that my sister's name is Ines.")
            wait_text(page, "#local2-chat", "I will remember that")
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
    with Served(create_app(agent, ui=False)) as url:
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
