"""Whether what a text states is found in its evidence: the one check of support.

Research's verify holds each sentence of a report to the sources it cites, and the critic's
grounding check holds a chat answer's figures to what the turn's tools returned; both ask
"is what this says in that text?", and both ask it here. A claim is supported by evidence
when every number it states (:func:`local2.retrieval._quantities.unstated_numbers`) and
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from local2.retrieval._passages import relevance, split_passages
from local2.retrieval._quantities import unstated_numbers
from local2.retrieval._text import terms, words

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
