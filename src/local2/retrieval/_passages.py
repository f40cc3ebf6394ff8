"""The passages of a text or a document most relevant to a question, within a budget.

A text is split into passages (runs of whole lines, long paragraphs at sentence ends), each
scored against the question with BM25, a passage next to a strong one gaining a little (a
heading's paragraph), and the best ones that fit the budget are kept in reading order.
Lexical scoring is light (no model in the fetch path) and measured good enough by
``bench/page_text.py``. One picker serves a web page (``tools/passages.py: focus``), a
document of many pages (:func:`pick_passages`, whose passages never straddle a page and
carry its number) and a search hit (:func:`best_passage`: the part of a chunk that answers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from local2.documents import GAP, Passage, page_marker, truncate_paragraphs
from local2.retrieval._bm25 import bm25_scores
from local2.retrieval._text import sentences, terms

if TYPE_CHECKING:  # the web page worker imports this module, and not pydantic with the model
    from local2.documents import Document

MIN_PASSAGE = 300  # short lines (headings, list items) are grouped up to this size
MAX_PASSAGE = 800  # longer paragraphs are split at sentence ends
NEIGHBOUR_WEIGHT = 0.3  # a passage next to a strong one (a heading's paragraph) gains this
# BM25 among one text's passages: Robertson's usual values (a page's passages are alike in
# length, so b matters little).
PASSAGE_K1, PASSAGE_B = 1.2, 0.75


def _split_long(line: str) -> list[str]:
    """A paragraph over ``MAX_PASSAGE`` chars as sentence groups (or hard cuts) under it."""
    if len(line) <= MAX_PASSAGE:
        return [line]
    pieces: list[str] = []
    current = ""
    for sentence in sentences(line, ends=".!?;:"):
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


def relevance(passages: Sequence[str], question: str) -> list[float]:
    """Each passage's BM25 for the question, plus ``NEIGHBOUR_WEIGHT`` of its stronger
    neighbour's (all zero when no passage has a word of the question)."""
    raw = bm25_scores(
        [terms(p) for p in passages], set(terms(question)), k1=PASSAGE_K1, b=PASSAGE_B
    )
    near = [
        max(raw[i - 1] if i else 0.0, raw[i + 1] if i + 1 < len(raw) else 0.0)
        for i in range(len(raw))
    ]
    return [s + NEIGHBOUR_WEIGHT * n for s, n in zip(raw, near, strict=True)]


def choose(sizes: Sequence[int], scores: Sequence[float], room: int) -> list[int]:
    """Indices of the passages to show, best first while each fits what ``room`` has left,
    in reading order; empty when not even the best one fits (the caller cuts it)."""
    chosen = []
    for i in sorted(range(len(sizes)), key=lambda i: (-scores[i], i)):
        if sizes[i] <= room:
            chosen.append(i)
            room -= sizes[i]
    return sorted(chosen)


def pick_passages(document: Document, question: str, budget: int) -> list[Passage]:
    """The passages of ``document`` most relevant to ``question``, in reading order, that
    render (``render_passages``) in at most ``budget`` characters.

    Scored across all pages at once (a word rare in the document weighs more); with no word
    of the question anywhere, the document's first passages. When the best passage alone is
    larger than the budget, its head is all there is room for.
    """
    unit = document.unit
    found = [(page.number, text) for page in document.pages for text in split_passages(page.text)]
    if not found or budget <= 0:
        return []
    scores = relevance([text for _, text in found], question)
    sizes = [len(text) + _overhead(unit, page) for page, text in found]
    best = max(range(len(found)), key=lambda i: (scores[i], -i))
    if sizes[best] > budget:  # the best passage alone is over the budget: its head
        page, text = found[best]
        cut = truncate_paragraphs(text, max(budget - _overhead(unit, page), 1), "")
        return [Passage(page, best, cut, scores[best])]
    chosen = choose(sizes, scores, budget)
    return [Passage(found[i][0], i, found[i][1], scores[i]) for i in chosen]


def _overhead(unit: str, page: int) -> int:
    """Characters a passage may add beside its text when rendered: its page marker (or a
    gap marker) and the newlines around it."""
    return max(len(page_marker(unit, page)), len(GAP)) + 2


def best_passage(text: str, query: str, chars: int) -> str:
    """The part of ``text`` (a search hit's chunk) that answers ``query``, in at most
    ``chars`` characters, white space folded: its most relevant sentence with the ones
    around it that fit, the more relevant neighbour first; the text's start when no
    sentence has a word of the query. A hit shows this, not its chunk's first lines."""
    flat = " ".join(text.split())
    if len(flat) <= chars:
        return flat
    # A page's lines are often a paragraph wrapped: sentences run across line breaks.
    found = [" ".join(s.split()) for s in sentences(text, ends=".!?;:")]
    if not found:
        return _cut(flat, chars)
    scores = relevance(found, query)
    best = max(range(len(found)), key=lambda i: (scores[i], -i))
    if scores[best] <= 0:
        return _cut(flat, chars)
    room = chars - 2  # for the "… " that says the passage starts inside the text
    first = last = best
    size = len(found[best])
    while True:
        before = scores[first - 1] if first > 0 else None
        after = scores[last + 1] if last + 1 < len(found) else None
        if before is None and after is None:
            break
        take_before = after is None or (before is not None and before > after)
        i = first - 1 if take_before else last + 1
        if size + 1 + len(found[i]) > room:
            break
        size += 1 + len(found[i])
        first, last = (i, last) if take_before else (first, i)
    lead = "… " if first > 0 else ""
    return lead + _cut(" ".join(found[first : last + 1]), room)


def _cut(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    head = text[: max(chars - 2, 1)].rsplit(" ", 1)[0]
    return f"{head} …"
