"""What the chat-sources tests share: the question, the preprint arXiv's answer names, a model
that searches once and answers with the first title found, and settings for the recorded
scholarly APIs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from local2.config import Settings
from local2_testkit.brains import Reply, message_text, tool_names
from local2_testkit.ollama_server import FakeOllama
from tests.kit.scholarly_stub import Stub
from tests.research.sources_helpers import settings_for

QUESTION = "What does research say about sleep and declarative memory?"
PREPRINT = "Slow-wave sleep consolidates declarative memory"  # arXiv's 2024 entry's title


def searcher(request: dict[str, Any]) -> Reply:
    """Searches once, then answers with the first title the search gave."""
    messages = request.get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        text = message_text(messages[-1])
        title = next((ln for ln in text.splitlines() if "Title:" in ln), "nothing found")
        return Reply(content=f"The search found: {title.split('Title:', 1)[1].strip()}")
    if "web_search" in tool_names(request):
        return Reply(tool_calls=[{"name": "web_search", "arguments": {"query": "sleep memory"}}])
    return Reply(content="No tools were offered.")


def chat_settings(fake: FakeOllama, apis: Stub, data: Path) -> Settings:
    settings = settings_for(fake, apis, data)
    settings.web.search.provider = "mock"  # the web, when it is asked: canned, offline
    return settings
