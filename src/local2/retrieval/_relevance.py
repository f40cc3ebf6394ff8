"""How relevant a text is to a question, and whether a claim is in its evidence: BM25,
rank fusion, the passages picked within a budget, and the one check of support.

The passages of a text or a document most relevant to a question, within a budget.
A text is split into passages (runs of whole lines, long paragraphs at sentence ends), each
scored against the question with BM25, a passage next to a strong one gaining a little (a
heading's paragraph), and the best ones that fit the budget are kept in reading order.
Lexical scoring is light (no model in the fetch path) and measured good enough by
``bench/page_text.py``. One picker serves a web page (``tools/_passages.py: focus``), a
document of many pages (:func:`pick_passages`, whose passages never straddle a page and
carry its number) and a search hit (:func:`best_passage`: the part of a chunk that answers).

The one BM25: bm25s (MIT, numpy only), over documents given as term lists.

Its scores are Okapi BM25's with Lucene's idf, ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b +
b * len / avg))``: bm25s' "lucene" variant times ``k1 + 1``, so a score means what the
hand-written one it replaced meant. ``k1`` and ``b`` are named by each caller: a snippet
rerank, a page's passages and a folder of notes are different collections. The vocabulary
is numbered in first-seen order and ties are broken by position, so nothing depends on
hash order.

Reciprocal-rank fusion: several rankings of the same items made one, by rank alone.

``score(item) = sum(1 / (k + rank))`` over the rankings that have it (rank from 1), so a
BM25 score and a cosine similarity, which share no scale, need none. ``k = 60`` is the
value of Cormack et al. (2009), which measured good on the folder benchmark too
(``bench/folder_search.py``).

Whether what a text states is found in its evidence: the one check of support.

Research's verify holds each sentence of a report to the sources it cites, and the critic's
grounding check holds a chat answer's figures to what the turn's tools returned; both ask
"is what this says in that text?", and both ask it here. A claim is supported by evidence
when every number it states (:func:`local2.retrieval._text.unstated_numbers`) and
every proper name it states are in the evidence, and its content words (:func:`terms`,
less the words that only frame a claim: "according", "also", "source") are found in one
passage of each evidence text (:func:`split_passages`, the best ones chosen by BM25,
:func:`relevance`; a passage with its neighbour, where a sentence straddles the cut), all
but one in four of them. A sentence that shares only its names and
numbers with a source ("The council of Kelsby banned cars in 2026 [1]" against a page about
Kelsby's 2026 bridge vote) is not supported by it.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from local2.documents import GAP, Passage, page_marker, truncate_paragraphs
from local2.retrieval._text import sentences, terms, unstated_numbers, words

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

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


class Bm25:
    """An index of ``documents`` (each a list of terms, :func:`local2.retrieval.terms`),
    built once and read by any thread."""

    def __init__(self, documents: Sequence[Sequence[str]], *, k1: float, b: float) -> None:
        self.k1, self.b = k1, b
        self.size = len(documents)
        self.vocab: dict[str, int] = {}
        ids = [[self.vocab.setdefault(t, len(self.vocab)) for t in doc] for doc in documents]
        self._model: Any = None
        if self.size:
            # bm25s with numpy: 222 modules at import, only once there is something to index
            import bm25s  # type: ignore[import-untyped]  # bm25s ships no type hints

            self._model = bm25s.BM25(k1=k1, b=b, method="lucene")
            self._model.index((ids, self.vocab), show_progress=False)

    def __len__(self) -> int:
        return self.size

    def save(self, folder: Path) -> None:
        """Keep the built index in ``folder`` (bm25s' own files), for :meth:`load`: a
        process that starts reads it in a few milliseconds instead of building it again."""
        folder.mkdir(parents=True, exist_ok=True)
        if self._model is not None:
            self._model.save(str(folder), show_progress=False)

    @classmethod
    def load(cls, folder: Path, size: int, *, k1: float, b: float) -> Bm25:
        """The index of ``size`` documents :meth:`save` kept in ``folder``."""
        index = cls([], k1=k1, b=b)
        if size:
            # bm25s with numpy: 222 modules at import, only once there is something to index
            import bm25s

            model = bm25s.BM25.load(str(folder), show_progress=False)
            if (model.k1, model.b, model.scores["num_docs"]) != (k1, b, size):
                raise ValueError(f"{folder} holds another index")
            index._model, index.vocab, index.size = model, model.vocab_dict, size
        return index

    def scores(self, query: Iterable[str]) -> NDArray[np.float32]:
        """Each document's score for the query's terms (each counted once)."""
        # numpy: loaded with bm25s, only once there is an index
        import numpy as np

        wanted = [self.vocab[t] for t in dict.fromkeys(query) if t in self.vocab]
        if not wanted or self._model is None:
            return np.zeros(self.size, dtype=np.float32)
        found: NDArray[np.float32] = self._model.get_scores_from_ids(wanted)
        return found * np.float32(self.k1 + 1)

    def top(self, query: Iterable[str], k: int) -> list[tuple[int, float]]:
        """The ``k`` best documents that have a term of the query: ``(index, score)``, best
        first, an earlier one first among equals."""
        # numpy: loaded with bm25s, only once there is an index
        import numpy as np

        scores = self.scores(query)
        matching = np.flatnonzero(scores > 0)
        if k < 1 or not len(matching):
            return []
        order = matching[np.lexsort((matching, -scores[matching]))][:k]
        return [(int(i), float(scores[i])) for i in order]

    @property
    def matrix_bytes(self) -> int:
        """The size of the score matrix (the index, without the texts)."""
        if self._model is None:
            return 0
        scores = self._model.scores
        return int(sum(scores[k].nbytes for k in ("data", "indices", "indptr")))


def bm25_scores(
    documents: Sequence[Sequence[str]], query: Iterable[str], *, k1: float, b: float
) -> list[float]:
    """Each tokenised document's BM25 for the query terms (a few dozen snippets, a page's
    passages: built and scored at once).

    Every term the query does not have is counted as one stand-in term: the lengths, and so
    the scores, are the same, and the index is built over a vocabulary of the query's terms
    (bm25s' build grows with the vocabulary: 60 passages of 2,000 distinct terms took 30 ms
    built whole, 1 ms so)."""
    wanted = set(query)
    kept = [[t if t in wanted else "" for t in doc] for doc in documents]
    return [float(s) for s in Bm25(kept, k1=k1, b=b).scores(wanted - {""})]


T = TypeVar("T", bound=Hashable)


@dataclass(frozen=True)
class Fused(Generic[T]):
    """An item of the fused ranking: its fused score and its rank in each ranking (1-based;
    None: not in that one)."""

    item: T
    score: float
    ranks: tuple[int | None, ...]


def fuse(rankings: Sequence[Sequence[T]], k: int = 60) -> list[Fused[T]]:
    """The items of ``rankings`` (each best first) by fused score, best first; among equals
    the one ranked earlier in the first ranking that has it first."""
    scores: dict[T, float] = {}
    ranks: dict[T, list[int | None]] = {}
    for which, ranking in enumerate(rankings):
        for rank, item in enumerate(ranking, start=1):
            if item in ranks and ranks[item][which] is not None:
                continue  # an item twice in one ranking counts at its best rank
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            ranks.setdefault(item, [None] * len(rankings))[which] = rank
    order = list(scores)  # first seen first: the tie-break
    order.sort(key=lambda item: -scores[item])
    return [Fused(item, scores[item], tuple(ranks[item])) for item in order]


# Words that frame or link a claim rather than state it: a report's "according to the
# source", "also", "in summary". They need not be in the evidence.
FRAME_WORDS = frozenset(
    terms(
        """
        according additionally also although another answer based besides citation cite cited
        cites conclusion consequently document documents especially evidence finally
        found further furthermore given hence however indeed information instance
        likewise mention mentioned mentions moreover namely notably note noted notes
        overall particular particularly report reported reports result results said say
        says similarly source sources specifically summary therefore though thus whereas
        yet
        """
    )
)
# A word that starts with a letter; a name when that letter is a capital (any script's:
# "Étienne Périer" as well as "Kelsby").
_LETTER_WORD = re.compile(r"\b[^\W\d_][\w'’-]*\w|\b[^\W\d_]\b")
_NOT_NAMES = frozenset({"I", "A", "OK"})
_FIRST_WORD = re.compile(r"[^\W_]")
PASSAGES_TRIED = 3  # of each evidence text, the best by BM25 whose words are counted
PREFIX_MATCH = 5  # a word this long or longer meets a longer one it begins ("direct"/"director")


def allowed_missing(words: int) -> int:
    """How many of a claim's content words (names and numbers aside) its evidence may lack:
    one in four, none of three or fewer, for the writer's own words around what the source
    says ("its bridge, which dates from 1894" for "the bridge that has crossed the harbour
    since 1894"). A short claim rests on each of its words: "banned cars" is not "voted"."""
    return words // 4


def names(text: str) -> list[str]:
    """The proper names ``text`` states: capitalised words but the first (any sentence
    starts with a capital), each once."""
    first = _FIRST_WORD.search(text)
    found = [
        m.group(0)
        for m in _LETTER_WORD.finditer(text)
        if m.group(0)[0].isupper()
        and (first is None or m.start() != first.start())
        and m.group(0) not in _NOT_NAMES
    ]
    return list(dict.fromkeys(found))


def _has_name(name: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) is not None


def unstated_names(claim: str, evidence: str) -> list[str]:
    """The proper names of ``claim`` that ``evidence`` never writes (case aside)."""
    return [n for n in names(claim) if not _has_name(n, evidence)]


def _named_mid_sentence(word: str, evidence: str) -> bool:
    """Whether ``evidence`` writes ``word`` with its capital inside a sentence (a name, as
    "Kelsby" is), not only at a sentence's start (as "Work is expected ..." is)."""
    for m in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", evidence):
        before = evidence[: m.start()].rstrip()
        if before and before[-1] not in ".!?:\n\"'“‘([-*#>|":
            return True
    return False


def content_words(text: str, evidence: str = "") -> list[str]:
    """The words of ``text`` that state something (:func:`terms`, less :data:`FRAME_WORDS`)
    other than its names and numbers (checked on their own), each once, in order. Its first
    word is a name too when ``evidence`` writes it as one: "Kelsby voted ..." states a
    vote, not "kelsby"."""
    named = set(terms(" ".join(names(text))))
    first = _FIRST_WORD.search(text)
    if first is not None and text[first.start()].isupper():
        lead = text[first.start() :].split(maxsplit=1)[0].strip(",;:.!?)'\"’”")
        if _named_mid_sentence(lead, evidence):
            named |= set(terms(lead))
    return list(
        dict.fromkeys(
            t
            for t in terms(text)
            if t not in FRAME_WORDS and t not in named and not any(c.isdigit() for c in t)
        )
    )


def as_written(claim: str, content: Iterable[str]) -> list[str]:
    """Each of ``content`` (content words of ``claim``, as :func:`terms` folds them) as
    ``claim`` first writes it, lower-cased: "pressure" rather than "pressur"."""
    written: dict[str, str] = {}
    for word in words(claim):
        for term in terms(word):
            written.setdefault(term, word)
    return [written.get(c, c) for c in content]


def _meets(word: str, words: set[str]) -> bool:
    if word in words:
        return True
    if len(word) < PREFIX_MATCH or not word.isalpha():
        return False
    return any(len(w) >= PREFIX_MATCH and (w.startswith(word) or word.startswith(w)) for w in words)


def _best_passage(claim: str, wanted: Sequence[str], text: str) -> tuple[str, set[str]]:
    """The passage of ``text`` that has the most of ``wanted`` among its best by BM25 (each
    read alone, and with the one before or after it: a long sentence may straddle the cut
    between two), and the words of ``wanted`` it has."""
    passages = split_passages(text) or [text]
    scores = relevance(passages, claim)
    tried = sorted(range(len(passages)), key=lambda i: (-scores[i], i))[:PASSAGES_TRIED]
    best, best_found = passages[tried[0]], set[str]()
    for i in tried:
        for first, last in ((i, i), (i - 1, i), (i, i + 1)):
            if first < 0 or last >= len(passages):
                continue
            passage = "\n".join(passages[first : last + 1])
            have = set(terms(passage))
            found = {w for w in wanted if _meets(w, have)}
            if len(found) > len(best_found):
                best, best_found = passage, found
    return best, best_found


@dataclass(frozen=True)
class Support:
    """What a claim states that its evidence lacks, and the passages it was held to."""

    numbers: list[str]  # numbers stated that no evidence text has
    names: list[str]  # proper names stated that no evidence text has
    words: list[str]  # content words (names and numbers aside) the chosen passages lack
    stated: int  # content words (names and numbers aside) the claim states
    passages: list[str] = field(default_factory=list)  # the passage of each evidence text

    @property
    def supported(self) -> bool:
        return not self.numbers and not self.names and not self.words_short

    @property
    def words_short(self) -> bool:
        """More content words are missing than :func:`allowed_missing` lets pass."""
        return len(self.words) > allowed_missing(self.stated)


def check_support(claim: str, evidence: Iterable[str]) -> Support:
    """How far ``evidence`` (each text a source: its title on the first line, which every
    passage of it is read with, as a page's heading names what its sentences say "he" of)
    supports ``claim``."""
    texts = [t for t in evidence if t.strip()]
    whole = "\n".join(texts)
    wanted = content_words(claim, whole)
    passages: list[str] = []
    found: set[str] = set()
    for text in texts:
        title, _, body = text.partition("\n")
        passage, have = _best_passage(claim, wanted, body or title)
        title_words = set(terms(title))
        found |= have | {w for w in wanted if _meets(w, title_words)}
        passages.append(passage)
    return Support(
        numbers=unstated_numbers(claim, whole),
        names=unstated_names(claim, whole),
        words=[w for w in wanted if w not in found],
        stated=len(wanted),
        passages=passages,
    )
