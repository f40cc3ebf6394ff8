"""What the person sees when the model's final reply cannot be shown (DESIGN §2).

Small models often end a turn by copying a tool's raw output, echoing the tool list or call
template from their prompt, or writing a tool call that was never run. None of that is an
answer: :func:`unusable_reason` recognises it, and :func:`fallback_answer` builds a clearly
labelled extract from the turn's tool results instead (titles, snippets and URLs; the page
excerpt for a fetch), or says plainly that the model could not answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from local2.graph.nodes.await_tool import UNTRUSTED_NOTE
from local2.models.prompted_tools import (
    CALL_INSTRUCTION,
    CALL_TEMPLATE,
    RESULT_PREFIX,
    TOOLS_HEADER,
)
from local2.models.toolcall_args import REPAIR_HEADER, REPAIR_TOOLS_LINE
from local2.models.toolcall_text import parse_tool_calls

RAW_OUTPUT = "a copy of raw tool output"
EARLIER_EXTRACT = "a copy of an earlier extract"
TEMPLATE_ECHO = "a copy of its tool instructions"
UNEXECUTED_CALL = "a tool call that was never run"

EXCERPT_CHARS = 700
SNIPPET_CHARS = 300
MIN_PROSE_WORDS = 8  # prose left beside a stray call that is still worth showing

_OUTPUT_MARKUP = re.compile(r"</?tool_output\b|" + re.escape(UNTRUSTED_NOTE[:28]), re.I)
_CALL_MARKUP = re.compile(r"</?tool_call>|<\|tool_call_(?:start|end)\|>|\[TOOL_CALLS\]", re.I)
_RAW_START = re.compile(
    r"\A\s*(?:\[Canned results[^\n]*\n\s*)?"
    r"(?:Today's date: \d{4}-\d{2}-\d{2}|URL: \S+\s*\n\s*Extracted text:"
    r"|Memories recalled for:|No results found for:|No memories found for:"
    r"|\[tool (?:error|timeout)|\[unknown tool:)",
    re.I,
)
_RESULT_LABELS = re.compile(r"^\s*(?:\[\d+\]\s*)?(?:Snippet|Extracted text):", re.M | re.I)
_TEMPLATE_PARTS = tuple(
    p.lower()
    for p in (
        TOOLS_HEADER,
        CALL_INSTRUCTION,
        REPAIR_HEADER,
        REPAIR_TOOLS_LINE,
        '"<tool name>"',
        '"<argument>"',
        CALL_TEMPLATE[:30],
    )
)


# An entry of a memory or file listing as the tools write it: "[m4137aae64303] (similarity
# 0.62, just now, fact) ..." or "[1] notes/a.md (lines 3-9, similarity 0.71)", with its
# indented continuation lines.
_LISTING_LINE = re.compile(
    r"^[ \t]*\[[^\]\n]{1,64}\][ \t]*(?:\S[^\n(]*)?"
    r"\((?:[^)\n]*, )?similarity \d\.\d\d\b[^)\n]*\)[^\n]*(?:\n|\Z)"
    r"(?:    [^\n]*(?:\n|\Z))*",  # the entry's indented continuation lines
    re.M,
)


def without_listing_lines(text: str) -> tuple[str, int]:
    """``text`` without the lines it copied from a memory or file listing, and how many.

    Small models answer, then append the recall listing they were shown (seen from the
    real SmolLM2: tests/fixtures/embedded_run/listing_echo.json). Those lines are tool
    output, not the answer; prose around them stays."""
    kept, cut = _LISTING_LINE.subn("", text)
    return (kept.strip("\n") if cut else text), cut


def _signature_line(tool_names: Sequence[str]) -> re.Pattern[str] | None:
    """A line listing a tool the way the prompt does: ``- web_fetch(url*: string): ...``."""
    if not tool_names:
        return None
    names = "|".join(re.escape(n) for n in tool_names)
    arg = r"\w+\*?\s*:\s*\w+"
    return re.compile(rf"^\s*[-*]?\s*(?:{names})\(\s*(?:{arg}(?:\s*,\s*{arg})*)?\s*\)", re.M)


def echoes_template(text: str, tool_names: Sequence[str]) -> bool:
    """Did the model copy its tool list or call template instead of using a tool?"""
    lowered = text.lower()
    if any(part in lowered for part in _TEMPLATE_PARTS):
        return True
    signature = _signature_line(tool_names)
    return bool(signature and signature.search(text))


def unusable_reason(text: str, tools: Mapping[str, dict]) -> str | None:
    """Why ``text`` must not be shown as the answer, or None when it is a real answer.

    ``tools`` maps the turn's tool names to their parameter schemas.
    """
    prefixes = tuple(RESULT_PREFIX.format(name=n).lower() for n in tools)
    stripped = text.strip()
    if stripped.startswith(_FALLBACK_STARTS):  # parroting an extract from its history
        return EARLIER_EXTRACT
    if _OUTPUT_MARKUP.search(text):
        return RAW_OUTPUT
    if _RAW_START.match(text) or _RESULT_LABELS.search(text):
        return RAW_OUTPUT
    if prefixes and stripped.lower().startswith(prefixes):
        return RAW_OUTPUT
    if echoes_template(text, list(tools)):
        return TEMPLATE_ECHO
    parsed = parse_tool_calls(text, tools)
    if parsed.calls or parsed.errors or _CALL_MARKUP.search(text):
        return UNEXECUTED_CALL
    return None


def prose_beside_call(text: str, tools: Mapping[str, dict]) -> str | None:
    """The prose a model wrote around a stray call, if it stands on its own as an answer."""
    prose = parse_tool_calls(text, tools).text.strip()
    if len(prose.split()) < MIN_PROSE_WORDS or unusable_reason(prose, tools):
        return None
    return prose


# --------------------------------------------------------------------------- the extract

_SEARCH_HIT = re.compile(
    r"^\[(\d+)\] Title: (?P<title>.*)\nSnippet: (?P<snippet>.*)\nURL: (?P<url>.*)$", re.M
)
_FETCHED = re.compile(r"\AURL: (?P<url>\S+)\s*\nExtracted text:\n(?P<text>.*)\Z", re.S)
_MEMORY = re.compile(r"^\[(?P<id>[^\]]+)\] \((?P<meta>[^)]*)\) (?P<text>.+)$", re.M)
_SAVED = re.compile(r"\ASaved to memory as \[(?P<id>[^\]]+)\]\.\Z")


def _cut(text: str, limit: int) -> str:
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


def _search_extract(call: Mapping[str, Any]) -> list[str]:
    result = str(call.get("result") or "")
    hits = list(_SEARCH_HIT.finditer(result))
    if not hits:
        return []
    query = (call.get("args") or {}).get("query", "")
    canned = " (canned mock results, not a real search)" if "[Canned results" in result else ""
    lines = [f'Search results for "{query}"{canned}:']
    for m in hits:
        lines.append(f"{m.group(1)}. {m['title'].strip()} — {_cut(m['snippet'], SNIPPET_CHARS)}")
        lines.append(f"   {m['url'].strip()}")
    return lines


def _fetch_extract(call: Mapping[str, Any]) -> list[str]:
    m = _FETCHED.match(str(call.get("result") or "").strip())
    if not m or not m["text"].strip():
        return []
    excerpt = _cut(m["text"], EXCERPT_CHARS).replace("\n", "\n> ")
    return [f"From the page {m['url']}:", f"> {excerpt}"]


def _memory_extract(call: Mapping[str, Any]) -> list[str]:
    found = list(_MEMORY.finditer(str(call.get("result") or "")))
    if not found:
        return []
    return ["Recalled from earlier conversations:"] + [
        f"- {_cut(m['text'], SNIPPET_CHARS)}" for m in found
    ]


def _saved_extract(call: Mapping[str, Any]) -> list[str]:
    """What was saved, not only its id: "Remember that ..." is often a first question."""
    m = _SAVED.match(str(call.get("result") or "").strip())
    text = (call.get("args") or {}).get("text")
    if not m or not isinstance(text, str) or not text.strip():
        return _quoted(call)
    return [f"Saved to memory as [{m['id']}]:", f"> {_cut(text, SNIPPET_CHARS)}"]


_EXTRACTORS = {
    "web_search": _search_extract,
    "web_fetch": _fetch_extract,
    "recall_memory": _memory_extract,
    "save_memory": _saved_extract,
}


def _extract(call: Mapping[str, Any]) -> list[str]:
    if call.get("error"):
        return []
    extractor = _EXTRACTORS.get(str(call.get("tool")), _quoted)
    return extractor(call)


def _quoted(call: Mapping[str, Any]) -> list[str]:
    """Any other tool's result, quoted as it came."""
    result = str(call.get("result") or "").strip()
    return [f"From {call.get('tool')}:", f"> {_cut(result, EXCERPT_CHARS)}"] if result else []


COULD_NOT_ANSWER = "The model could not answer this question"
COULD_NOT_WRITE = "The model could not write an answer"
_FALLBACK_STARTS = (COULD_NOT_ANSWER, COULD_NOT_WRITE)


def fallback_answer(reason: str, tool_calls: Sequence[Mapping[str, Any]]) -> str:
    """A labelled extract of the turn's tool results, or a plain statement of failure."""
    sections = [lines for lines in map(_extract, tool_calls) if lines]
    failed = [c for c in tool_calls if c.get("error")]
    if not sections:
        text = f"{COULD_NOT_ANSWER}: its reply was {reason} and is not shown."
        if failed:
            text += " " + "; ".join(f"{c.get('tool')} failed ({c.get('error')})" for c in failed)
            text += "."
        return text
    head = (
        f"{COULD_NOT_WRITE} (its reply was {reason}), so here is what its "
        "tools found, quoted as they returned it:"
    )
    return "\n\n".join([head, *("\n".join(lines) for lines in sections)])
