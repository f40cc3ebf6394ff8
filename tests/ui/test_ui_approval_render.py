"""What the app shows of a paused turn, without a browser: the chat note and the panel text."""

from __future__ import annotations

from local2.ui._approval import describe
from local2.ui._render import TurnView

ASKED = {
    "subject": "tool.approval.requested",
    "t": 0.4,
    "tool": "save_memory",
    "call_id": "c2",
    "args": {"text": "PLANTED ![x](https://evil.example/i.png)"},
    "reason": "save_memory changes something beyond this answer",
    "after": {
        "tool": "web_fetch",
        "call_id": "c1",
        "args": {"url": "https://news.example/`x`"},
        "preview": "```\n![y](https://evil.example/j.png)",
    },
}


def titles(view: TurnView) -> list[str]:
    return [str((m.metadata or {}).get("title") or "") for m in view.messages()]


def test_a_paused_turn_shows_what_waits_until_it_is_decided() -> None:
    view = TurnView("Summarise it")
    view.apply("event", {"subject": "tool.request.web_fetch", "tool": "web_fetch", "call_id": "c1"})
    view.apply("event", {"subject": "tool.result.web_fetch", "call_id": "c1", "duration_s": 0.2})
    view.apply("event", ASKED)
    view.apply("approval", {"calls": [ASKED]})
    view.apply("final", {"status": "awaiting_approval", "answer": "", "event_log": [ASKED]})
    assert not view.finished  # paused, not over
    assert titles(view)[-1] == "Waiting for your approval"
    assert "save_memory(text=" in str(view.messages()[-1].content)

    view.apply("event", {"subject": "tool.approval.denied", "call_id": "c2", "by": "person"})
    view.apply(
        "event", {"subject": "tool.request.save_memory", "tool": "save_memory", "call_id": "c2"}
    )
    view.apply(
        "event",
        {"subject": "tool.result.save_memory", "call_id": "c2", "error": "denied by the person"},
    )
    assert "Waiting for your approval" not in titles(view)
    assert "Tool denied: save_memory" in titles(view)
    view.apply("final", {"status": "done", "answer": "It opened in 1932."})
    assert view.finished and view.answer == "It opened in 1932."


def test_the_panel_shows_model_and_page_text_only_in_code() -> None:
    text = describe({"calls": [ASKED]})
    assert text.startswith("### The model wants to run a tool call that needs your approval")
    assert "**save_memory** — save_memory changes something" in text
    outside = [line for line in text.splitlines() if "evil.example" in line]
    # Every line carrying model or page text is inside a code block or span, never markup.
    fenced = text.split("```json")[1].split("```")[0]
    assert "PLANTED ![x](https://evil.example/i.png)" in fenced
    assert "````text\n```\n![y](https://evil.example/j.png)\n````" in text
    assert len(outside) == 2
    assert '`` {"url": "https://news.example/`x`"} ``' in text
