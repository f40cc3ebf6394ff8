"""Two people on one app, in a real browser: Debian's chromium driven by Playwright, against
the real server (create_app + uvicorn), the people in the agent's own store.

Alice signs in on Gradio's login page with her name and token, asks a question (answered by a
fake Ollama over HTTP) and sees her name at the top. Bob signs in, in a fresh browser and in
hers after she logs out: his Resume list never shows her session, and her session id pasted
(in the Chat tab or Time travel) is as unknown as one that never was. A wrong token is
refused at the login page. ``ui.list_all_sessions`` is on: it lists all of the signed-in
person's sessions (Alice's shows up in a browser she never used), never anyone else's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from local2.config import load_settings
from local2.service.agent import Agent
from local2_testkit.brains import Reply
from local2_testkit.ollama_server import FakeOllama
from tests.kit.browser import (
    BROWSER_MARKS,
    app_served,
    ask,
    load_checkpoints,
    resume,
    session_of,
    shot,
    text_of,
    wait_text,
)

ALICE_ASKS = "Where did I leave the lighthouse key?"
ALICE_ANSWER = "Under the blue stone by the lighthouse door."
BOB_ASKS = "What should I cook tonight?"
BOB_ANSWER = "A mushroom risotto."

pytestmark = BROWSER_MARKS


def answer(request: dict[str, Any]) -> Reply:
    """The model: each person's own answer to their own question."""
    asked = " ".join(str(m.get("content") or "") for m in request.get("messages") or [])
    if BOB_ASKS in asked and ALICE_ASKS not in asked:
        return Reply(thinking="Bob is hungry.", content=BOB_ANSWER)
    return Reply(thinking="I know where the key is.", content=ALICE_ANSWER)


@dataclass
class Team:
    url: str
    agent: Agent
    tokens: dict[str, str]


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with FakeOllama(answer, chunk_delay_s=0.01) as fake:
        settings = load_settings(
            overrides={
                "system": {
                    "ollama_host": fake.url,
                    "data_dir": str(tmp_path_factory.mktemp("people-ui")),
                },
                "generator": {"backend": "ollama"},
                "web": {"search": {"provider": "mock"}},
                "ui": {"list_all_sessions": True},
            }
        )
        agent = Agent(settings, backend="ollama", memory=None, critic=None)
        people = agent.storage.people
        assert people is not None
        tokens = {name: people.add(name) for name in ("alice", "bob")}
        with app_served(agent) as url:
            yield Team(url, agent, tokens)
        agent.close()


def login_page(browser: Any, url: str, context: Any = None) -> Any:
    context = context or browser.new_context(viewport={"width": 1400, "height": 1100})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url)
    page.wait_for_selector("input[data-testid=password]")
    return page


def sign_in(page: Any, name: str, token: str) -> None:
    page.fill("input[data-testid=textbox]", name)
    page.fill("input[data-testid=password]", token)
    page.click("button:has-text('Login')")


def signed_in(page: Any, name: str) -> None:
    page.wait_for_selector("#local2-question textarea")
    page.wait_for_function("document.querySelector('#local2-session code')?.innerText.length > 8")
    wait_text(page, "#local2-signed-in", f"Signed in as {name}")


def offered(page: Any) -> str:
    """The Resume list's choices, opened."""
    page.click("#local2-session-pick input")
    page.wait_for_timeout(300)
    return page.evaluate(
        "() => [...document.querySelectorAll('ul[role=listbox] li')]"
        ".map(li => li.innerText).join('\\n')"
    )


def refused(page: Any) -> None:
    page.wait_for_function(
        "() => /incorrect credentials/i.test(document.body.innerText)", timeout=15_000
    )
    assert page.query_selector("#local2-question") is None  # still the login page


def test_each_person_signs_in_and_sees_only_their_own(team: Team, browser: Any) -> None:
    alice_token, bob_token = team.tokens["alice"], team.tokens["bob"]

    # A wrong token, or someone else's, is refused at the login page.
    wrong = login_page(browser, team.url)
    sign_in(wrong, "alice", alice_token[:-2] + "xx")
    refused(wrong)
    wrong.reload()
    wrong.wait_for_selector("input[data-testid=password]")
    sign_in(wrong, "bob", alice_token)
    refused(wrong)
    shot(wrong, "people-01-wrong-token")
    wrong.context.close()

    # Alice signs in, is named at the top, and asks.
    alice = login_page(browser, team.url)
    shot(alice, "people-02-login")
    sign_in(alice, "alice", alice_token)
    signed_in(alice, "alice")
    assert alice.is_visible("#local2-logout")
    ask(alice, ALICE_ASKS)
    wait_text(alice, "#local2-chat", ALICE_ANSWER)
    alice.wait_for_selector("#local2-rate-1:not([disabled])")
    hers = session_of(alice)
    assert team.agent.access.session_owner(hers) == "alice"
    assert ALICE_ASKS[:20] in offered(alice)
    shot(alice, "people-03-alice-answered")

    # Bob, in a browser of his own: nothing of hers in his list, her id is unknown to him.
    bob = login_page(browser, team.url)
    sign_in(bob, "bob", bob_token)
    signed_in(bob, "bob")
    assert "alice" not in text_of(bob, "#local2-signed-in")
    listed = offered(bob)
    assert hers[:8] not in listed and ALICE_ASKS[:20] not in listed
    bob.keyboard.press("Escape")
    resume(bob, hers)
    wait_text(bob, "#local2-banner", f"No session {hers} here.")
    assert ALICE_ANSWER not in text_of(bob, "#local2-chat")
    assert session_of(bob) != hers
    bob.click("button[role=tab]:has-text('Time travel')")
    bob.fill("#tt-session textarea", hers)
    load_checkpoints(bob, f"No turns in session {hers}")
    assert ALICE_ASKS not in text_of(bob, "#tt-turns")
    assert ALICE_ASKS not in text_of(bob, "#tt-original")
    shot(bob, "people-04-bob-cannot-see-alice")
    bob.click("button[role=tab]:has-text('Chat')")
    ask(bob, BOB_ASKS)
    wait_text(bob, "#local2-chat", BOB_ANSWER)
    bob.wait_for_selector("#local2-rate-1:not([disabled])")
    listed = offered(bob)
    assert BOB_ASKS[:20] in listed and ALICE_ASKS[:20] not in listed
    his = session_of(bob)
    assert team.agent.access.session_owner(his) == "bob"
    bob.context.close()

    # Alice logs out; Bob signs in in her browser (her session is in its local storage).
    alice.click("#local2-logout")
    alice.wait_for_selector("input[data-testid=password]")
    sign_in(alice, "bob", bob_token)
    signed_in(alice, "bob")
    listed = offered(alice)
    assert ALICE_ASKS[:20] not in listed and hers[:8] not in listed
    assert BOB_ASKS[:20] in listed  # his own, from his other browser (list_all_sessions)
    shot(alice, "people-05-bob-in-alices-browser")
    alice.context.close()

    # And Alice, in a browser she never used, finds her own session there.
    again = login_page(browser, team.url)
    sign_in(again, "alice", alice_token)
    signed_in(again, "alice")
    listed = offered(again)
    assert ALICE_ASKS[:20] in listed and BOB_ASKS[:20] not in listed
    again.keyboard.press("Escape")
    resume(again, hers)
    wait_text(again, "#local2-chat", ALICE_ANSWER)
    again.context.close()
