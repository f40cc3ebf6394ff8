"""Brains that follow a script: exact replies in order, or a tool called every time (the
tool-loop guard's test)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable
from typing import Any

from local2_testkit.brains import Brain, Reply, tool_names


class ScriptBrain:
    """Replies from a list, in order: for tests that need exact model output.

    Items are :class:`Reply`, plain strings (content) or callables of the request. When the
    script runs out, the server answers HTTP 500 so the test fails loudly.
    """

    def __init__(self, replies: Iterable[Reply | str | Brain]) -> None:
        self._replies = list(replies)
        self._lock = threading.Lock()
        self.used = 0

    # an Ollama request body, as a client sent it (JSON)
    def __call__(self, request: dict[str, Any]) -> Reply | str:
        with self._lock:
            if self.used >= len(self._replies):
                return Reply(error=f"ScriptBrain: no reply left after {self.used}", status=500)
            item = self._replies[self.used]
            self.used += 1
        return item(request) if callable(item) else item


class LoopBrain:
    """Calls a tool every time tools are offered: exercises the tool-loop guard.

    Without tools (the forced synthesis) it answers from the tool results it was shown.
    """

    def __init__(self, tool: str = "web_search") -> None:
        self.tool = tool
        self._count = itertools.count(1)

    # an Ollama request body, as a client sent it (JSON)
    def __call__(self, request: dict[str, Any]) -> Reply:
        n = next(self._count)
        offered = tool_names(request)
        if not offered:
            seen = sum(1 for m in request.get("messages") or [] if m.get("role") == "tool")
            return Reply(
                thinking="No tools are offered any more; I must answer with what I gathered.",
                content=f"Forced synthesis from {seen} tool results: I kept searching.",
            )
        name = self.tool if self.tool in offered else offered[0]
        spec = next(t["function"] for t in request["tools"] if t["function"]["name"] == name)
        params = spec.get("parameters") or {}
        key = next(iter(params.get("required") or params.get("properties") or ["query"]))
        return Reply(
            thinking=f"I am not satisfied yet; calling {name} again (call {n}).",
            tool_calls=[{"name": name, "arguments": {key: f"loop {n}"}}],
        )
