"""Facts: short standalone statements worth remembering, and where they may come from.

A fact is one sentence in the third person ("The user's sister's name is Ines."), a
``key`` naming the attribute it sets ("sister name": a newer fact with the same key
supersedes an older one) and its provenance. Facts about the person come only from the
person's own words; tool output is never a source (docs/architecture.md, "Trust boundaries").

This module holds the parts that need no model: the rules used when no model extracts
(``"remember that X"``, ``"my X is Y"``, where one works, lives, is called), the rewrite of
first-person clauses into the third person, key normalisation and the grounding check that
keeps a model from attributing to the person what the person never said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypedDict

from local2.retrieval import sentences

# Where a fact came from (stored as the engram's ``source``).
Source = Literal["user_request", "user_message", "answer"]
USER_REQUEST: Source = "user_request"  # "remember that ...": the person asked for it
USER_MESSAGE: Source = "user_message"  # distilled from what the person said
ANSWER: Source = "answer"  # distilled from the final answer (never one built on tool output)

MAX_FACT_CHARS = 300


class FactRecord(TypedDict):
    """A fact as a queued turn keeps it (JSON), until it is stored."""

    text: str
    key: str
    source: Source
    extractor: Literal["rules", "model"]


@dataclass(frozen=True)
class Fact:
    text: str
    key: str
    source: Source
    extractor: Literal["rules", "model"] = "rules"

    def as_dict(self) -> FactRecord:
        return {
            "text": self.text,
            "key": self.key,
            "source": self.source,
            "extractor": self.extractor,
        }

    @classmethod
    def from_dict(cls, data: FactRecord) -> Fact:
        """A fact queued as :meth:`as_dict` wrote it (one from before ``key`` and
        ``extractor`` were kept gets their defaults)."""
        return cls(
            text=str(data["text"]),
            key=str(data.get("key", "")),
            source=data.get("source", USER_MESSAGE),
            extractor=data.get("extractor", "rules"),
        )


# --------------------------------------------------------------------------- keys


_KEY_NOISE = re.compile(
    r"\b(?:the|a|an|my|your|our|user|users|person|persons|of|new|current|present|latest)\b"
)


def fact_key(text: str) -> str:
    """The attribute a fact sets, normalised so "sister's name" == "Sister name" == "name of
    my sister"-style wordings compare equal where they use the same words."""
    key = text.lower().replace("\u2019", "'")
    key = re.sub(r"'s\b|s'(?=\s|$)", "", key)
    key = _KEY_NOISE.sub(" ", key)
    key = re.sub(r"[^\w]+", " ", key)
    return " ".join(key.split())[:80]


# --------------------------------------------------------------------------- third person


_MODALS = {
    "am": "is",
    "'m": "is",
    "was": "was",
    "have": "has",
    "'ve": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
    "haven't": "hasn't",
    "'ll": "will",
    "'d": "would",
}
_UNCHANGED = {
    "can", "could", "will", "would", "should", "must", "might", "may", "did", "had", "didn't",
    "can't", "won't", "wasn't", "couldn't", "wouldn't", "shouldn't", "grew", "went", "got",
    "bought", "met", "left", "made", "took", "came", "ran", "wrote", "drove", "flew", "became",
    "began", "felt", "found", "gave", "kept", "knew", "lost", "paid", "said", "saw", "sold",
    "spent", "taught", "thought", "told", "won", "swam", "sang", "broke", "chose", "fell",
    "forgot", "heard", "held", "read", "rode", "sat", "slept", "spoke", "stood", "wore",
}  # fmt: skip
_ADVERBS = {
    "also", "really", "usually", "often", "always", "never", "still", "just", "recently",
    "sometimes", "only", "mostly", "rarely", "now", "currently", "actually", "already",
}  # fmt: skip


def _conjugate(verb: str) -> str:
    low = verb.lower()
    if low in _MODALS:
        return _MODALS[low]
    if low in _UNCHANGED or low.endswith("ed") or not low.isalpha():
        return verb
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


_I_VERB = re.compile(r"\bI(?:\s+(" + "|".join(sorted(_ADVERBS)) + r"))?(\s+|'(?=[a-z]))(\w+'?\w*)")
_PRONOUNS = [
    (re.compile(r"\bmy\b", re.I), "the user's"),
    (re.compile(r"\b(?:mine|our|ours)\b", re.I), "the user's"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
    (re.compile(r"\bme\b", re.I), "the user"),
]


def third_person(clause: str) -> str:
    """'my sister is Ines' -> 'The user's sister is Ines.'; 'I work at Acme' -> 'The user
    works at Acme.' A light rewrite for English first-person statements, not a parser."""
    text = clause.strip().replace("\u2019", "'")

    def verb(m: re.Match[str]) -> str:
        adverb, gap, word = m.group(1), m.group(2), m.group(3)
        if gap == "'":  # I'm, I've, I'll, I'd
            return "the user " + _conjugate("'" + word)
        adverb_text = f" {adverb}" if adverb else ""
        return f"the user{adverb_text} {_conjugate(word)}"

    text = _I_VERB.sub(verb, text)
    text = re.sub(r"\bI\b", "the user", text)
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    # Once "the user" has been named, later mentions are "their" / "them".
    first = text.find("the user")
    if first >= 0:
        head, tail = text[: first + 8], text[first + 8 :]
        tail = tail.replace("the user's", "their").replace("the user", "them")
        tail = re.sub(r"\bthem (is|was|has|does|works|lives)\b", r"the user \1", tail)
        text = head + tail
    text = text.rstrip(" .,;:!")
    if not text:
        return ""
    return text[0].upper() + text[1:] + "."


# --------------------------------------------------------------------------- rules


_LEAD = r"^(?:(?:please|also|and|oh|ok|okay|so|hey|btw|by the way|just)[,\s]+)*"
_EXPLICIT = re.compile(
    _LEAD + r"(?:remember|note|keep in mind|don't forget|do not forget|never forget|make a note)"
    r"(?:\s+(?:that|this))?\s*[:,\-]?\s*(?P<what>.+)$",
    re.I,
)
_PRONOUN = re.compile(r"^(?:it|this|that|these|those|all that|all of that)\W*$", re.I)
_NOT_A_FACT = re.compile(r"^(?:to\b|what\b|when\b|where\b|who\b|how\b|why\b|if\b|me\b)", re.I)
_MY_X_IS_Y = re.compile(
    r"\b(?:my|our)\s+(?P<x>[\w' -]{1,40}?)\s+(?:is|are|was|were)\s+(?P<y>[^,;]{1,100})", re.I
)
_STATEMENTS: list[tuple[re.Pattern[str], str | None]] = [  # None: the key is the fact itself
    (re.compile(r"\bI(?:'m| am)?\s+(?:work|working)\s+(?:at|for)\s+\S", re.I), "workplace"),
    (re.compile(r"\bI(?:'ve| have)?\s+(?:live|living|lived)\s+in\s+\S", re.I), "home"),
    (re.compile(r"\bI\s+was\s+born\s+(?:in|on)\s+\S", re.I), "birth"),
    (re.compile(r"\bI(?:'m| am)\s+(?:allergic|intolerant)\s+to\s+\S", re.I), None),
    (re.compile(r"\bI(?:'m| am)\s+(?:lactose|gluten)\s+intolerant\b", re.I), None),
    (re.compile(r"\bI\s+(?:have|own)\s+(?:a|an|one|two|three|\d+)\s+\w+\s*,?\s+"
                r"(?:called|named)?\s*[A-Z]", re.I), None),
]  # fmt: skip
_CALL_ME = re.compile(r"\b(?:call me|I'm called|I am called)\s+(?P<name>[^,;.!?]{1,40})", re.I)


def message_sentences(message: str) -> list[str]:
    """A chat message's sentences: a line break or a ";" ends one too (a line is a thought)."""
    return sentences(message, ends=".!?;", lines=True)


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or bool(
        re.match(
            r"^(?:do|did|can|could|would|will|what|where|who|how|when|why|is|are)\b",
            sentence.strip(),
            re.I,
        )
    )


def _statement_fact(clause: str, source: Source) -> Fact | None:
    """A fact from one first-person clause, or None when no rule recognises it."""
    mine = _MY_X_IS_Y.search(clause)
    if mine:
        return Fact(third_person(clause[mine.start() :]), fact_key(mine.group("x")), source)
    for pattern, key in _STATEMENTS:
        found = pattern.search(clause)
        if found:
            text = third_person(clause[found.start() :])
            return Fact(text, key or fact_key(text), source)
    called = _CALL_ME.search(clause)
    if called:
        return Fact(f"The user wants to be called {called.group('name').strip()}.", "name", source)
    return None


def explicit_requests(message: str) -> list[Fact]:
    """What the person explicitly asked to be remembered ("Remember that ...")."""
    facts = []
    said = message_sentences(message)
    for i, sentence in enumerate(said):
        found = _EXPLICIT.match(sentence)
        if not found or sentence.rstrip().endswith("?"):
            continue
        what = found.group("what").strip()
        if _PRONOUN.match(what):  # "My favourite colour is green. Please remember it."
            before = said[i - 1] if i else ""
            what = "" if not before or _is_question(before) else before
        if not what or _NOT_A_FACT.match(what):
            continue
        fact = _statement_fact(what, USER_REQUEST)
        text = fact.text if fact else third_person(what)
        facts.append(Fact(text, fact.key if fact else fact_key(text), USER_REQUEST))
    return _unique(facts)


def only_requests(message: str) -> bool:
    """Is the message nothing but requests to remember ("Remember that ...", and thanks)?
    Then there is nothing for a model to answer: the save is the reply."""
    said = [s for s in message_sentences(message) if not _COURTESY.match(s)]
    if not said or not explicit_requests(message):
        return False
    for i, sentence in enumerate(said):
        found = _EXPLICIT.match(sentence)
        if found and _PRONOUN.match(found.group("what").strip()):
            continue  # "Please remember it.": what it names is the sentence before
        asked_next = _EXPLICIT.match(said[i + 1]) if i + 1 < len(said) else None
        if asked_next and _PRONOUN.match(asked_next.group("what").strip()):
            continue
        if not explicit_requests(sentence):
            return False
    return True


_COURTESY = re.compile(r"^\W*(?:thanks?(?: you)?|please|ok(?:ay)?|cheers)\W*$", re.I)


def rule_facts(message: str) -> list[Fact]:
    """Facts the rules find in the person's message: explicit requests and plain statements
    ("my X is Y", "I work at ...", "I live in ...", "call me ..."). Questions give none."""
    facts = explicit_requests(message)
    for sentence in message_sentences(message):
        if _EXPLICIT.match(sentence) or _is_question(sentence):
            continue
        fact = _statement_fact(sentence, USER_MESSAGE)
        if fact is not None:
            facts.append(fact)
    return _unique(facts)


def _unique(facts: Iterable[Fact]) -> list[Fact]:
    seen: set[str] = set()
    out = []
    for fact in facts:
        norm = " ".join(fact.text.lower().split())
        if fact.text and norm not in seen and len(fact.text) <= MAX_FACT_CHARS:
            seen.add(norm)
            out.append(fact)
    return out


# --------------------------------------------------------------------------- grounding


_GENERIC = {
    "the", "user", "user's", "users", "person", "a", "an", "he", "she", "they", "their", "it",
    "his", "her", "this", "that", "there", "in", "on", "at", "of", "and", "or", "i", "my",
}  # fmt: skip
# A fact's words as the grounding check needs them, not local2.retrieval's terms: a name
# keeps its capital (that is how it is told from other words) and a number stays whole
# ("3.5", "12:30", "2024-05-01"), where terms() lower-cases and splits at the dot.
_WORD = re.compile(r"[A-Za-z\u00c0-\u024f][\w'\u2019-]*|\d+(?:[.,:/-]\d+)*")


def _words(text: str) -> list[str]:
    return [re.sub(r"'s$", "", w.lower().replace("\u2019", "'")) for w in _WORD.findall(text)]


def grounded(fact_text: str, source_text: str) -> bool:
    """Does ``source_text`` support ``fact_text``? Every name and number in the fact must be
    in the source, and at least one of its other content words (a model may paraphrase, but
    must not bring in a name, a number or a whole statement from elsewhere)."""
    source = set(_words(source_text))
    raw = _WORD.findall(fact_text)
    salient = [w for w in raw if (w[0].isupper() or w[0].isdigit()) and w.lower() not in _GENERIC]
    if any(_words(w)[0] not in source for w in salient):
        return False
    content = [w for w in _words(fact_text) if w not in _GENERIC and len(w) > 2]
    return not content or any(w in source or w.rstrip("s") in source for w in content)
