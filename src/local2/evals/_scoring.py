"""String scores beside the grader's: exact match and token F1 as SQuAD computes them, and
whether a gold answer appears in the answer at all.

Normalisation is SQuAD's (and HotpotQA's): lower case, punctuation removed, the articles
``a``, ``an``, ``the`` removed, whitespace collapsed. Against several gold answers the best
score counts. Exact match suits short answers; a sentence-long answer almost never matches
exactly, so ``contains_gold`` is what the disagreement list compares the grader with.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: punctuation deleted (Unicode's too, where SQuAD deletes only
    ASCII's), then articles, then runs of whitespace."""
    kept = "".join(
        ch
        for ch in text.lower()
        if ch not in _PUNCTUATION and not unicodedata.category(ch).startswith("P")
    )
    return " ".join(_ARTICLES.sub(" ", kept).split())


def exact_match(answer: str, golds: Sequence[str]) -> bool:
    norm = normalize_answer(answer)
    return any(norm == normalize_answer(g) for g in golds)


def token_f1(answer: str, gold: str) -> float:
    """SQuAD's token F1 of one answer against one gold answer."""
    said = normalize_answer(answer).split()
    wanted = normalize_answer(gold).split()
    if not said or not wanted:
        return float(said == wanted)
    common = sum((Counter(said) & Counter(wanted)).values())
    if common == 0:
        return 0.0
    precision = common / len(said)
    recall = common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def best_f1(answer: str, golds: Sequence[str]) -> float:
    return max((token_f1(answer, g) for g in golds), default=0.0)


def contains_gold(answer: str, golds: Sequence[str]) -> bool:
    """A gold answer, normalised, appears as whole words in the normalised answer."""
    said = f" {normalize_answer(answer)} "
    return any((norm := normalize_answer(g)) != "" and f" {norm} " in said for g in golds)
