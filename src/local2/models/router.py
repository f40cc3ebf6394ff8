"""The keyword router: the last fallback for models that cannot call tools (DESIGN §2).

It runs only for a model without native tool calling (the embedded model, or an Ollama
model whose capabilities lack ``tools``), never over a tool-capable model's own choice.
When such a model answers without calling anything, a few unmistakable cues in the question
still deserve a tool: a URL (read it), time-sensitive words (search), or a reference to an
earlier conversation or to the person's own details (recall). It is deliberately
conservative: an ordinary question such as "What is the capital of France?" routes nowhere.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection

from local2.models.toolcall_text import new_call_id

_URL = re.compile(r"\bhttps?://[^\s<>\"'`]+", re.I)
_URL_TRAILING = ".,;:!?)]}>*_"

_TIME_WORDS = re.compile(
    r"\b(?:today|today's|tonight|tomorrow|yesterday|latest|newest|news|breaking"
    r"|currently|nowadays|right now|as of now|up[- ]to[- ]date|weather|forecast"
    r"|prices?(?! (?:elasticity|discrimination|theory|ceiling|floor|index)\b)"
    r"|recently|recent(?! common ancestors?\b)|this (?:week|month|year|morning|weekend)"
    r"|last (?:week|month|night)|now(?! (?:known|called|named|that|part of)\b))\b",
    re.I,
)
# "current" is time-sensitive except in physics ("the electric current in a circuit").
_CURRENT = re.compile(
    r"(?<!electric )(?<!electrical )(?<!alternating )(?<!direct )(?<!ocean )\bcurrent\b"
    r"(?! (?:density|flow|flows|source|sources|divider|law|loop)\b)",
    re.I,
)
_YEAR = re.compile(r"\b(20\d\d)\b")

_MEMORY = re.compile(
    r"\b(?:did i (?:tell|mention|say|ask|share|give)|what did i (?:say|tell|mention|ask)"
    r"|have i (?:told|mentioned|said)|i (?:told|mentioned to|said to) you"
    r"|(?:do|did|can|could) you (?:still )?remember|you remember"
    r"|remember (?:me|my|our|when i|what i)"
    r"|what do you (?:know|remember) about me|we (?:talked|spoke|discussed|chatted)"
    r"|(?:last|previous|earlier) (?:time|conversation|chat|session|discussion)s?"
    r"|(?:said|told|mentioned|asked|discussed|shared|gave) (?:you |me )?(?:\w+ ){0,4}earlier"
    r"|did (?:we|you|i) (?:discuss|talk about|agree|decide|settle on)"
    r"|you (?:said|told me|mentioned|suggested|recommended))\b",
    re.I,
)
# A short question about the person's own details, which only an earlier conversation can
# answer: "What's my dog's name?", "Do you know my birthday?", "Who am I?".
_PERSONAL = re.compile(
    r"(?:\b(?:what|who|where|when|which|how old)(?:'s| is| was| are| were)?"
    r"|\b(?:do|did) you know|\btell me) my (?:\w+(?:'s)? ){0,2}\w+\s*[?.!]*\s*$"
    r"|\bwho am i\b|\bdo you know (?:who i am|anything about me)\b",
    re.I,
)
# "last time" about the world, not about us: "When was the last time Halley's comet ...".
_WORLD_LAST_TIME = re.compile(r"\bwhen was the last time\b(?! (?:i|we|you)\b)", re.I)


def _first_url(query: str) -> str | None:
    m = _URL.search(query)
    return m.group().rstrip(_URL_TRAILING) if m else None


def is_time_sensitive(query: str, today: dt.date | None = None) -> bool:
    """Words that mean the answer depends on now, or a year at or after last year."""
    if _TIME_WORDS.search(query) or _CURRENT.search(query):
        return True
    year = (today or dt.date.today()).year
    return any(int(y) >= year - 1 for y in _YEAR.findall(query))


# "Remember that my dog is called Rex." is something to keep, not a question to look up.
_REMEMBER_THIS = re.compile(
    r"^\s*(?:please,?\s+)?(?:remember|note|keep in mind)\b(?!.*\?\s*$)", re.I
)


def asks_to_remember(query: str) -> bool:
    """Is the message an instruction to remember something (not a question)?"""
    return bool(_REMEMBER_THIS.search(query))


def asks_about_memory(query: str) -> bool:
    """Does the question refer back to an earlier conversation, or to the person's own
    details that only one could hold?"""
    if asks_to_remember(query):
        return False
    if _PERSONAL.search(query):
        return True
    m = _MEMORY.search(query)
    return bool(m) and not (
        m.group().lower().startswith("last time") and _WORLD_LAST_TIME.search(query)
    )


_OWN_FILES = re.compile(
    r"\bmy (?:own )?(?:notes?|files?|documents?|docs|folders?|notebook|journal)\b", re.I
)


def asks_about_own_files(query: str) -> bool:
    """Does the question ask about the person's own notes or files (``search_files``)?"""
    return bool(_OWN_FILES.search(query))


def route(query: str, tool_names: Collection[str], today: dt.date | None = None) -> list[dict]:
    """Calls (``{"name", "args", "id"}``) the question's cues ask for; at most one per tool.

    A URL wins over searching (the page is what was asked about); "remember that ..." saves
    it; a question about an earlier conversation or the person's own details recalls memory
    and does not also search the web.
    """
    query = (query or "").strip()
    calls: list[dict] = []

    def add(name: str, args: dict) -> None:
        if name in tool_names and all(c["name"] != name for c in calls):
            calls.append({"name": name, "args": args, "id": new_call_id()})

    if not query:
        return calls
    url = _first_url(query)
    if url:
        add("web_fetch", {"url": url})
    if asks_to_remember(query):
        add("save_memory", {"text": query})
        return calls
    memory = asks_about_memory(query)
    if memory:
        add("recall_memory", {"query": query})
    files = asks_about_own_files(query)
    if files:
        add("search_files", {"query": query})
    if not url and not memory and not files and is_time_sensitive(query, today):
        add("web_search", {"query": query})
    return calls
