"""The passages of a text or a document most relevant to a question, within a budget.

A text is split into passages (runs of whole lines, long paragraphs at sentence ends), each
scored against the question with BM25, a passage next to a strong one gaining a little (a
heading's paragraph), and the best ones that fit the budget are kept in reading order.
Lexical scoring is light (no model in the fetch path) and measured good enough by
``bench/page_text.py``. One picker serves a web page (``tools/passages.py: focus``) and a
document of many pages (:func:`pick_passages`), whose passages never straddle a page and
carry its number, for citations (:func:`page_link`) and for reading on (:func:`pages_text`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from local2.documents.extract import truncate_paragraphs

if TYPE_CHECKING:  # the web page worker imports this module, and not pydantic with the model
    from local2.documents.model import Document

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


def relevance(passages: Sequence[str], question: str) -> list[float]:
    """Each passage's BM25 for the question, plus ``NEIGHBOUR_WEIGHT`` of its stronger
    neighbour's (all zero when no passage has a word of the question)."""
    raw = bm25_scores([terms(p) for p in passages], set(terms(question)))
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


@dataclass(frozen=True)
class Passage:
    """A passage of a document: the page (slide, chapter) it is on, its place among the
    document's passages (``index``, reading order), and its relevance to the question."""

    page: int
    index: int
    text: str
    score: float


def pick_passages(document: Document, question: str, budget: int) -> list[Passage]:
    """The passages of ``document`` most relevant to ``question``, in reading order, that
    render (:func:`render_passages`) in at most ``budget`` characters.

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
    return max(len(_marker(unit, page)), len(GAP)) + 2


def _marker(unit: str, page: int, count: int | None = None) -> str:
    of = f" of {count}" if count else ""
    return f"[{unit.capitalize()} {page}{of}]"


def render_passages(passages: Sequence[Passage], unit: str = "page") -> str:
    """Passages as text: a ``[Page N]`` line where the page changes, ``[…]`` where passages
    of one page were left out between two shown."""
    parts: list[str] = []
    previous: Passage | None = None
    for passage in passages:
        if previous is None or passage.page != previous.page:
            parts.append(_marker(unit, passage.page))
        elif passage.index != previous.index + 1:
            parts.append(GAP)
        parts.append(passage.text)
        previous = passage
    return "\n".join(parts)


def pages_text(
    document: Document, first: int, last: int | None = None, max_chars: int | None = None
) -> str:
    """Pages ``first``..``last`` (inclusive; to the end when ``last`` is None), each under a
    ``[Page N of M]`` line; pages beyond ``max_chars`` are left out, and a last line says
    where to go on. ``ValueError`` names a range outside the document."""
    count = document.page_count
    end = count if last is None else last
    unit = document.unit
    if first < 1 or end < first:
        raise ValueError(f"{unit}s are numbered from 1, first to last: {first}-{end} is no range")
    if first > count:
        raise ValueError(f"the document has {count} {unit}{'s' if count != 1 else ''}")
    end = min(end, count)
    parts: list[str] = []
    size = 0
    for page in document.pages[first - 1 : end]:
        block = f"{_marker(unit, page.number, count)}\n{page.text or _empty(document, page.number)}"
        if max_chars is not None and parts and size + len(block) + 2 > max_chars:
            parts.append(
                f"[{unit.capitalize()}s {page.number}-{end} left out: over {max_chars:,} "
                f"characters; ask for them from {unit} {page.number}.]"
            )
            break
        if max_chars is not None and not parts and len(block) > max_chars:
            block = truncate_paragraphs(block, max_chars)
        parts.append(block)
        size += len(block) + 2
    return "\n\n".join(parts)


def _empty(document: Document, number: int) -> str:
    if number in document.no_text_pages:
        return "(no text layer on this page: a scan? OCR did not read it)"
    return "(no text on this page)"


def page_link(url: str, page: int | None) -> str:
    """``url`` opening at ``page``: the PDF open parameter ``#page=N`` (which browsers' PDF
    viewers follow), replacing any fragment; ``url`` unchanged without a page."""
    base = url.split("#", 1)[0]
    return f"{base}#page={page}" if page and page > 0 else url


def document_note(document: Document, url: str) -> str:
    """The line that opens a fetched document's text: what it is and how to cite a page,
    ``[Document: PDF, 40 pages, "Title"; cite a page as <url>#page=N]``."""
    from local2.documents.model import FORMAT_LABELS

    count = document.page_count
    unit = document.unit
    title = f', "{" ".join(document.title.split())[:120]}"' if document.title.strip() else ""
    base = url.split("#", 1)[0]
    cite = f"{base}#page=N" if document.format == "pdf" else f"{base}, {unit} N"
    return (
        f"[Document: {FORMAT_LABELS[document.format]}, {count} {unit}{'s' if count != 1 else ''}"
        f"{title}; cite a {unit} as {cite}]"
    )


_SECTION = re.compile(r"^\[(Page|Slide|Chapter) (\d+)(?: of \d+)?\]$", re.M)


def page_sections(text: str) -> list[tuple[int, str]]:
    """The pages of a document's text as web_fetch, read_file and the document hits render
    it (``[Page N]`` or ``[Page N of M]`` lines, also Slide and Chapter), as ``(N, text)``
    in order; text before the first marker is left out. Research cites ``file, page N``
    with it, and checks a quote against the page it names."""
    found = list(_SECTION.finditer(text))
    sections = []
    for i, marker in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        sections.append((int(marker.group(2)), text[marker.end() : end].strip("\n")))
    return sections
