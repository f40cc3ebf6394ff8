"""How a tool's result reads when it is quoted to the person in a fallback answer.

When a small model cannot write an answer, the turn shows what its tools found instead
(:func:`local2.graph._answer.fallback_answer`). Each tool may say how its result
is best quoted (:attr:`local2.tools._base.Tool.extract`, next to the code that formats the
result); any other tool's result is quoted as it came.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

EXCERPT_CHARS = 700
SNIPPET_CHARS = 300

# A tool call's record (``tool``, ``args``, ``result``) -> the lines that quote it; [] when
# there is nothing worth quoting.
Extract = Callable[[Mapping[str, Any]], list[str]]


def cut(text: str, limit: int) -> str:
    """At most ``limit`` characters, ending at a paragraph or sentence when one is near."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    for mark in ("\n\n", ". ", "\n"):
        at = head.rfind(mark)
        if at > limit // 2:
            return head[: at + (1 if mark == ". " else 0)].strip() + " …"
    return head.rsplit(" ", 1)[0] + " …"


def quoted(call: Mapping[str, Any]) -> list[str]:
    """Any tool's result, quoted as it came."""
    result = str(call.get("result") or "").strip()
    return [f"From {call.get('tool')}:", f"> {cut(result, EXCERPT_CHARS)}"] if result else []
