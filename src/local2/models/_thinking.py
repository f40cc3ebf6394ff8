"""Separate a model's thinking from its answer.

With ``reasoning=True`` Ollama sends thinking apart (``reasoning_content``); some servers and
models still put it inline as ``<think>...</think>`` or ``<|think|>...``. This moves any inline
thinking out of the answer so it never reaches history.
"""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, BaseMessage

_PAIRS = (
    (r"<think>", r"</think>"),
    (r"<thinking>", r"</thinking>"),
    (r"<\|think\|>", r"<\|/think\|>|<\|end_think\|>|</think>"),
)


def split_thinking(content: str) -> tuple[str, str]:
    """Return ``(thinking, answer)`` from text that may hold inline thinking blocks."""
    thoughts: list[str] = []
    answer = content
    for start, end in _PAIRS:
        closed = re.compile(rf"{start}(.*?)(?:{end})", re.DOTALL)
        thoughts.extend(m.strip() for m in closed.findall(answer))
        answer = closed.sub("", answer)
        # An opening tag never closed: everything after it is thinking (truncated output).
        dangling = re.search(rf"{start}(.*)$", answer, re.DOTALL)
        if dangling:
            thoughts.append(dangling.group(1).strip())
            answer = answer[: dangling.start()]
    return "\n\n".join(t for t in thoughts if t), answer.strip()


def message_text(message: BaseMessage) -> str:
    """The visible text of a message: string content, or its text blocks (never reasoning)."""
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def thinking_and_answer(message: AIMessage) -> tuple[str, str]:
    """Thinking (from the reasoning field and inline tags) and the clean answer."""
    reasoning = str(message.additional_kwargs.get("reasoning_content") or "").strip()
    inline, answer = split_thinking(message_text(message))
    thinking = "\n\n".join(t for t in (reasoning, inline) if t)
    return thinking, answer
