"""What the person-first tests share: a judge held until let go, the grades a turn got, and waiting
for a condition."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from local2_testkit.ollama_server import FakeOllama, Reply, RuleBrain, Served

JUDGE_DELAY_S = 3.0


HELD_S = 120.0  # the longest a held judge waits to be let go


WEAK = "hedge:1b"  # a second model for compare turns: it says it does not know


FRANCE = "What is the capital of France?"


GIL = "What is the Python GIL?"


HELLO = "Hello there"


class SlowJudge:
    """A brain whose grading replies (absolute and relative) wait ``delay_s`` first, and its
    other replies ``answer_delay_s``. Grading requests asked while ``open`` is clear are held
    until it is set (at most ``HELD_S``): the judge at work for as long as a test looks."""

    def __init__(self, brain: Any = None) -> None:
        self.brain = brain or RuleBrain()
        self.delay_s = JUDGE_DELAY_S
        self.answer_delay_s = 0.0
        self.open = threading.Event()
        self.open.set()

    def __call__(self, request: dict[str, Any]) -> Reply:
        reply = self.brain(request)
        if isinstance(reply, str):
            reply = Reply(content=reply)
        grading = "[RESULT]" in reply.content
        if grading:
            self.open.wait(HELD_S)
        reply.delay_s = self.delay_s if grading else self.answer_delay_s
        return reply


def is_grading(body: dict[str, Any], question: str | None = None) -> bool:
    """A judge's request (absolute or relative), about ``question`` if given."""
    text = "\n".join(str(m.get("content")) for m in body.get("messages") or [])
    judged = "###Response to evaluate" in text or "###Response A" in text
    return judged and (question is None or question in text)


def asked_to_grade(fake: FakeOllama, question: str) -> int:
    """How many grading requests about ``question`` the server has received."""
    return sum(1 for body in fake.chat_requests if is_grading(body, question))


def graded(fake: FakeOllama, question: str, *, closed: bool) -> list[Served]:
    """The grading requests about ``question`` the server ended: closed by the client before
    their reply (``closed``), or answered."""
    with fake.lock:
        served = list(fake.served)
    return [
        r
        for r in served
        if r.path == "/api/chat" and is_grading(r.body, question) and r.closed_by_client == closed
    ]


def wait_for(check: Callable[[], Any], what: str, timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def history(client: httpx.Client, session: str) -> list[dict[str, Any]]:
    reply = client.get(f"/sessions/{session}/history")
    reply.raise_for_status()
    turns: list[dict[str, Any]] = reply.json()["turns"]
    return turns


def grades(client: httpx.Client, session: str) -> dict[str, Any]:
    """Each turn's grade as ``GET /sessions/{id}/history`` shows it, by question."""
    return {t["user"]: t.get("critique") for t in history(client, session)}


def all_graded(client: httpx.Client, session: str, questions: list[str]) -> dict[str, Any]:
    shown = grades(client, session)
    return shown if all(shown.get(q) for q in questions) else {}
