"""Query-focused page text: the passages of a long page most relevant to the question.

Cutting a page at its first few thousand characters drops the answer whenever it sits
further down. Instead the page is split into passages, each scored against the question
(the person's query plus what the model asked for) with BM25, and the best ones that fit
the budget are shown in page order, gaps marked, with a closing note of what was left out.
Lexical scoring is light (no model in the fetch path) and measured good enough by
``bench/page_text.py``. A page that fits the budget is shown whole.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from local2.documents.extract import truncate_paragraphs

GAP = "[…]"
MIN_PASSAGE = 300  # short lines (headings, list items) are grouped up to this size
MAX_PASSAGE = 800  # longer paragraphs are split at sentence ends
NEIGHBOUR_WEIGHT = 0.3  # a passage next to a strong one (a heading's paragraph) gains this
_K1, _B = 1.2, 0.75

_WORD = re.compile(r"[^\W_]+")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours out over own same she should so some such than that the their theirs them then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours tell know please find give show want
    need many much get got use used using like page article web site http https www com org
    net html htm php aspx index
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def terms(text: str) -> list[str]:
    """Lower-cased, lightly stemmed content words of ``text`` (stopwords dropped).

    Identifiers are split at underscores, so ``__slots__`` meets "slots".
    """
    out = []
    for word in _WORD.findall(text.lower()):
        if word in _STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        out.append(_stem(word))
    return out


def _stem(word: str) -> str:
    """Fold plurals, -ing, -ed and a final e, so "cases"/"case" and "created"/"create" meet.

    Crude (Harman's S-stemmer plus two suffixes), but the same on both sides of the match.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _split_long(line: str) -> list[str]:
    """A paragraph over ``MAX_PASSAGE`` chars as sentence groups (or hard cuts) under it."""
    if len(line) <= MAX_PASSAGE:
        return [line]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(line):
        while len(sentence) > MAX_PASSAGE:
            cut = sentence.rfind(" ", 0, MAX_PASSAGE)
            cut = cut if cut > MAX_PASSAGE // 2 else MAX_PASSAGE
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:cut])
            sentence = sentence[cut:].lstrip()
        if current and len(current) + 1 + len(sentence) > MAX_PASSAGE:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces


def split_passages(text: str) -> list[str]:
    """Passages of ``MIN_PASSAGE``-``MAX_PASSAGE`` chars, each a run of whole lines where it can."""
    passages: list[str] = []
    current: list[str] = []
    size = 0
    for line in (ln for ln in text.split("\n") if ln.strip()):
        for piece in _split_long(line):
            if current and size + len(piece) > MAX_PASSAGE:
                passages.append("\n".join(current))
                current, size = [], 0
            current.append(piece)
            size += len(piece) + 1
            if size >= MIN_PASSAGE:
                passages.append("\n".join(current))
                current, size = [], 0
    if current:
        passages.append("\n".join(current))
    return passages


def bm25_scores(passages: list[list[str]], query: set[str]) -> list[float]:
    """Okapi BM25 of each tokenised passage for the query terms."""
    n = len(passages)
    if not n or not query:
        return [0.0] * n
    df: Counter[str] = Counter()
    for tokens in passages:
        df.update(query.intersection(tokens))
    avg = sum(len(t) for t in passages) / n or 1.0
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in query if df[t]}
    scores = []
    for tokens in passages:
        counts = Counter(t for t in tokens if t in idf)
        norm = _K1 * (1 - _B + _B * len(tokens) / avg)
        scores.append(sum(idf[t] * c * (_K1 + 1) / (c + norm) for t, c in counts.items()))
    return scores


@dataclass(frozen=True)
class Focused:
    """What the model is shown of a page, and how much was left out."""

    text: str
    passages_shown: int
    passages_total: int
    chars_shown: int  # page characters shown (gap markers and the note not counted)
    chars_total: int

    @property
    def whole(self) -> bool:
        return self.passages_shown == self.passages_total


def focus(text: str, question: str, budget: int) -> Focused:
    """The page whole when it fits ``budget`` chars, else its most relevant passages."""
    if len(text) <= budget:
        count = len(split_passages(text)) if text else 0
        return Focused(text, count, count, len(text), len(text))
    passages = split_passages(text)
    raw = bm25_scores([terms(p) for p in passages], set(terms(question)))
    near = [
        max(raw[i - 1] if i else 0.0, raw[i + 1] if i + 1 < len(raw) else 0.0)
        for i in range(len(raw))
    ]
    smoothed = [s + NEIGHBOUR_WEIGHT * n for s, n in zip(raw, near, strict=True)]
    order = sorted(range(len(passages)), key=lambda i: (-smoothed[i], i))
    room = budget - _NOTE_RESERVE
    chosen: set[int] = set()
    for i in order:
        cost = len(passages[i]) + len(GAP) + 2
        if cost <= room:
            chosen.add(i)
            room -= cost
    if not chosen:  # one passage larger than the whole budget: show its head
        first = order[0]
        passages[first] = truncate_paragraphs(passages[first], max(room - len(GAP) - 2, 1), "")
        chosen.add(first)
    shown = sum(len(passages[i]) for i in chosen)
    how = (
        "chosen for relevance to the question and kept in page order"
        if any(raw)
        else "from the top (nothing on the page matched the question's words)"
    )
    note = (
        f"\n[Page shortened to fit the context: {len(chosen)} of {len(passages)} passages shown "
        f"({shown:,} of {len(text):,} characters), {how}; {GAP} marks left-out text. To read "
        f"other parts, call web_fetch again with a `query` naming what you are looking for.]"
    )
    return Focused(_join(passages, chosen) + note, len(chosen), len(passages), shown, len(text))


_NOTE_RESERVE = 360  # room kept for the closing note


def _join(passages: list[str], chosen: set[int]) -> str:
    parts: list[str] = []
    previous = -1
    for i in sorted(chosen):
        if i != previous + 1:
            parts.append(GAP)
        parts.append(passages[i])
        previous = i
    if previous != len(passages) - 1:
        parts.append(GAP)
    return "\n".join(parts)
