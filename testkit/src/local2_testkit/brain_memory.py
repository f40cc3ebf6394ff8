"""What the fake model does with memory: extract facts, and answer from recalled memories.

Used by :class:`~local2_testkit.brains.RuleBrain` so tests and benchmarks exercise the real
memory pipeline through the Ollama protocol. It behaves like a capable model would, within
what deterministic rules can do:
- asked for facts (the extraction prompt, with a JSON-schema ``format``), it turns every
  first-person statement of the person's message into a third-person fact with a key, and
  returns JSON matching the schema. It reads only what it is shown, so it never sees tool
  output; it ignores questions. Its coverage is wider than the product's rule fallback
  (which knows only a few sentence shapes), as a model's would be.
- shown a ``<memory>`` block before the question, it answers from the first (most similar)
  memory when the question is about the person or shares a word with it, and acknowledges
  what it was asked to remember.
It is still rules: it cannot show how well a real model extracts or paraphrases.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from local2.memory import fact_key, message_sentences, third_person

_TAGGED = r"<{tag}>\n(.*?)\n</{tag}>"
_MEMORY = re.compile(r"<memory>\n(.*?)\n</memory>\s*", re.S)
_HIT_LINE = re.compile(r"^\[(m[0-9a-f]+)\] \([^)]*\) (.*)$")
_SAVED_LINE = re.compile(r"^Saved to memory just now, as the user asked: \[(m[0-9a-f]+)\] (.*)$")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|my|me|mine|we|we're|our|us)\b", re.I)
_LEAD = re.compile(
    r"^(?:(?:please|also|and|oh|ok|okay|so|btw|by the way|fyi|just so you know|for the record"
    r"|actually|correction|no|update)"
    r"[,\s]+)*(?:(?:remember|note|keep in mind|don't forget)(?:\s+(?:that|this))?[:,\s]+)?",
    re.I,
)
_REQUEST_START = re.compile(
    r"^(?:please\s+)?(?:summari[sz]e|tell|find|search|look|explain|show|give|help|read|fetch"
    r"|write|translate|compare|list|describe|check|open|get|make|send|let's|let us)\b",
    re.I,
)
_QUESTION_START = re.compile(
    r"^(?:do|did|does|can|could|would|will|what|where|who|whom|how|when|why|which|is|are)\b",
    re.I,
)
_STOP = {
    "the", "a", "an", "is", "are", "was", "were", "do", "does", "did", "i", "my", "me", "you",
    "your", "user", "users", "what", "where", "who", "how", "when", "which", "why", "of", "to",
    "in", "on", "at", "for", "and", "or", "it", "that", "this", "remember", "tell", "told",
    "know", "with", "have", "has", "be", "am", "s", "there", "about", "again", "name", "named",
    "been", "had", "ve", "ll", "d", "m", "t", "not", "very", "really",
}  # fmt: skip
_KEY_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bmy\s+([\w' -]{1,40}?)\s+(?:is|are|was|were)\b", re.I), r"\1"),
    (re.compile(r"\bI(?:'m| am)?\s+(?:work|working)\s+(?:at|for|as)\b", re.I), "employer"),
    (re.compile(r"\bI\s+(?:live|moved|relocated)\s+(?:in|to)\b", re.I), "home city"),
    (re.compile(r"\bI\s+was\s+born\b", re.I), "birth"),
    (re.compile(r"\b(?:call me|my name is|I'm called)\b", re.I), "name"),
    (re.compile(r"\bI\s+(?:have|own|got)\s+an?\s+(\w+)\s+(?:named|called)\b", re.I), r"\1 name"),
]  # fmt: skip


def is_extraction(request: Mapping[str, Any]) -> bool:
    """An ``/api/chat`` request for facts: a schema ``format`` with a ``facts`` array."""
    fmt = request.get("format")
    return isinstance(fmt, dict) and "facts" in (fmt.get("properties") or {})


def _between(tag: str, text: str) -> str:
    found = re.search(_TAGGED.format(tag=tag), text, re.S)
    return found.group(1) if found else ""


def _key(clause: str) -> str:
    for pattern, template in _KEY_RULES:
        found = pattern.search(clause)
        if found:
            return fact_key(found.expand(template))
    words = [w for w in re.findall(r"[a-z]+", third_person(clause).lower()) if w not in _STOP]
    return fact_key(" ".join(words[:4]))


# the JSON a model writes for the extraction prompt
def extract_facts(prompt: str) -> dict[str, Any]:
    """The JSON a capable model returns for the extraction prompt."""
    message = _between("user_message", prompt)
    facts = []
    for sentence in message_sentences(message):
        if sentence.rstrip().endswith("?") or _QUESTION_START.match(sentence):
            continue  # questions and requests hold no facts
        if _REQUEST_START.match(sentence):
            continue
        clause = _LEAD.sub("", sentence).strip()
        if not clause or not _FIRST_PERSON.search(clause) or clause.lower().startswith("to "):
            continue
        clause = re.sub(r"\b[Ww]e\b", "the user and their family", clause)
        facts.append(
            {"text": third_person(clause), "key": _key(clause), "about": "user", "source": "user"}
        )
    return {"facts": facts}


def extraction_reply(messages: Sequence[Mapping[str, Any]]) -> str:
    prompt = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    return json.dumps(extract_facts(prompt), ensure_ascii=False)


def split_memory(text: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]], str]:
    """``(recalled, saved, question)``: the memory block's lines as ``(id, text)`` pairs."""
    found = _MEMORY.search(text)
    if not found:
        return [], [], text
    recalled, saved = [], []
    for line in found.group(1).splitlines():
        hit, kept = _HIT_LINE.match(line), _SAVED_LINE.match(line)
        if kept:
            saved.append((kept.group(1), kept.group(2)))
        elif hit:
            recalled.append((hit.group(1), hit.group(2)))
    return recalled, saved, text[found.end() :].strip()


def _stems(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9']+", text.lower().replace("'s", ""))
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words if w not in _STOP}


_YOU_VERB = {"is": "are", "was": "were", "has": "have", "does": "do", "doesn't": "don't"}


def second_person(fact: str) -> str:
    """'The user's sister's name is Ines.' -> 'Your sister's name is Ines.'"""
    text = re.sub(r"\b[Tt]he user's\b", "your", fact)
    text = re.sub(r"\b[Tt]he user\b", "you", text)

    def verb(m: re.Match[str]) -> str:
        word = m.group(1)
        plain = _YOU_VERB.get(word)
        if plain is None:
            if word.endswith("ies"):
                plain = word[:-3] + "y"
            elif word.endswith(("oes", "ches", "shes", "sses", "xes")):
                plain = word[:-2]
            else:
                plain = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
        return f"you {plain}"

    text = re.sub(r"\byou (\w+'?\w*)", verb, text)
    return text[0].upper() + text[1:] if text else text


def answer_from_memory(question: str, recalled: list[tuple[str, str]]) -> str | None:
    """Answer a question from the most similar memory shown (the first), when the question
    is about the person or shares a word with that memory; else None."""
    if not recalled or "?" not in question:
        return None
    best = recalled[0]
    if not _FIRST_PERSON.search(question) and not _stems(question) & _stems(best[1]):
        return None  # an unrelated question that happened to recall something
    fact = best[1].split("\n")[0]
    if fact.startswith("Q: "):  # an episodic record: answer with what was said then
        return f"From our earlier conversation [{best[0]}]: {fact}"
    return f"From what you told me [{best[0]}]: {second_person(fact)}"
