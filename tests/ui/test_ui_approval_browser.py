"""The approval panel in a real browser (Debian's chromium, Playwright) against the real server.

The model obeys instructions in tool output (``ObeyingBrain`` behind a fake Ollama): the page
it reads asks it to save a planted memory and to fetch the attacker's URL with what the person
said earlier. While nobody approves, nothing is stored and nothing reaches the attacker; Deny
keeps it so; Approve in the app makes the calls. Screenshots go to the run's temp folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from local2.config import load_settings
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, ObeyingBrain
from local2_testkit.sites import Site
from tests.cli.helpers import PAGE, SECRET
from tests.kit.browser import app_served, ask, open_page, shot, text_of, wait_text

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path("/usr/bin/chromium").exists(),
        reason="needs Debian's chromium: scripts/setup.sh --browser",
    ),
]


@dataclass
class Stack:
    url: str
    agent: Agent
    attacker: Site
    page_url: str


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Site() as attacker, Site() as pages, FakeOllama(ObeyingBrain()) as fake:
        pages.pages["/kestrel"] = PAGE.replace("ATTACKER", attacker.url(""))
        settings = load_settings(
            overrides={
                "system": {"ollama_host": fake.url, "data_dir": str(tmp_path_factory.mktemp("a"))},
                "generator": {"backend": "ollama"},
                "web": {"fetch": {"allow_hosts": [pages.host, attacker.host]}},
            }
        )
        agent = Agent(settings, backend="ollama")
        with app_served(agent) as url:
            yield Stack(url, agent, attacker, pages.url("/kestrel"))
        agent.close()


def planted(agent: Agent) -> list[str]:
    memory = agent.services.memory
    assert memory is not None
    return [e["content"] for e in memory.list(200) if "PLANTED" in e["content"]]


def panel(page: Any, after: str | None = None) -> str:
    """The approval panel's text once it shows a question (other than ``after``).

    The question's details are waited for, not only the panel: between two questions the
    panel can show with its buttons and empty details for a moment."""
    page.wait_for_selector("#local2-approval", state="visible")
    page.wait_for_function(
        f"""(after) => {{
            const question = {QUESTION_JS};
            const text = question(document.querySelector('#local2-approval-details'));
            return text !== '' && text !== question(after);
        }}""",
        arg=after,
    )
    return text_of(page, "#local2-approval")


# A question's own text, in the page: Gradio's progress timer ("0.2s", "processing | 0.2s"),
# which shows inside the panel while a handler runs, is not part of it. Without this, the
# old question with a timer in front reads as a new one.
QUESTION_JS = """(node) => {
    const text = node === null ? '' : (typeof node === 'string' ? node : node.innerText);
    const timer = /^\\s*(processing\\s*\\|?\\s*)?[\\d.]+\\s*(\\/\\s*[\\d.]+)?s\\s*$/;
    return (text || '').split('\\n').filter((line) => !timer.test(line)).join('\\n').trim();
}"""


def decide(page: Any, button: str) -> str:
    """Click Approve or Deny; wait until that question is gone (hidden, or the next one).
    Returns the question's text, for :func:`panel` to wait for the next one.

    The question's own text is compared, not the whole panel's: while the handler runs,
    Gradio's progress timer ("0.1s") changes the panel's text with the old question still
    in it, and the old panel can show again for a moment before the next question fills it."""
    before = text_of(page, "#local2-approval-details")
    page.click(f"#local2-{button}")
    page.wait_for_function(
        f"""(before) => {{
            const question = {QUESTION_JS};
            const box = document.querySelector('#local2-approval');
            const details = document.querySelector('#local2-approval-details');
            return !box || box.offsetParent === null || !details
                || question(details) !== question(before);
        }}""",
        arg=before,
    )
    return before


def test_nobody_approving_means_no_memory_and_no_request(stack: Stack, browser: Any) -> None:
    page = open_page(browser, stack.url)
    ask(page, SECRET)
    wait_text(page, "#local2-critic", "Critic")
    ask(page, f"Summarise {stack.page_url}")
    waiting = panel(page)
    assert "save_memory" in waiting and "PLANTED: the user banks with EvilBank" in waiting
    assert "web_fetch" in waiting and stack.page_url in waiting  # the result it came after
    wait_text(page, "#local2-chat", "Waiting for your approval")
    shot(page, "21-approval-save-memory")
    page.wait_for_timeout(1500)  # nobody clicks: the turn just waits
    assert planted(stack.agent) == [] and stack.attacker.hits == []

    first = decide(page, "deny")
    waiting = panel(page, after=first)  # next the page's fetch, with what the person said
    assert "/exfil?d=My%20account%20number" in waiting
    assert "came neither from you nor from this turn" in waiting
    shot(page, "22-approval-exfil-fetch")
    decide(page, "deny")
    wait_text(page, "#local2-chat", "1932")
    wait_text(page, "#local2-critic", "Critic")
    chat = text_of(page, "#local2-chat")
    assert "Tool denied: save_memory" in chat and "Tool denied: web_fetch" in chat
    assert "Waiting for your approval" not in chat
    shot(page, "23-approval-denied-answer")
    assert planted(stack.agent) == [] and stack.attacker.hits == []
    page.context.close()


def test_approving_in_the_app_makes_the_calls(stack: Stack, browser: Any) -> None:
    stack.attacker.reset()
    page = open_page(browser, stack.url)
    ask(page, SECRET)
    wait_text(page, "#local2-critic", "Critic")
    ask(page, f"Summarise {stack.page_url}")
    assert "save_memory" in panel(page)
    first = decide(page, "approve")
    assert "/exfil?d=" in panel(page, after=first)
    assert len(planted(stack.agent)) == 1  # approved: stored before the next question
    decide(page, "approve")
    wait_text(page, "#local2-chat", "1932")
    chat = text_of(page, "#local2-chat")
    assert "Tool: save_memory" in chat and "Tool denied" not in chat
    [hit] = stack.attacker.hits
    assert hit.path.startswith("/exfil?d=My%20account%20number") and "LoCAL2" in hit.user_agent
    shot(page, "24-approval-approved")
    page.context.close()
