"""The app's example question works offline: the demo model (no native tool calls, so the
keyword router decides) answers it without a web search, and the news it does not offer as
an example is said to need the web."""

from __future__ import annotations

import re
from pathlib import Path

from local2.tools._registry import default_tools
from local2.tools._routing import route
from local2.ui._chat import EXAMPLE_PROMPT
from tests.kit.helpers import make_settings


def test_the_chat_boxs_example_needs_no_web(tmp_path: Path) -> None:
    examples = re.findall(r"e\.g\. ([^?]+\?)", EXAMPLE_PROMPT)
    assert examples == ["How does a heat pump work?"]
    tools = default_tools(make_settings(tmp_path), None)
    assert {t.name for t in tools} >= {"web_search", "web_fetch"}
    for question in examples:
        assert route(question, tools) == [], question
    assert route("What major AI news broke this week?", tools)  # news: a search...
    assert "AI news, needs the web" in EXAMPLE_PROMPT  # ...and the box says so
