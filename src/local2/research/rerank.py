"""A research search's hits, de-duplicated and reranked against its sub-question.

A research search asks for many results (``research.search_results``) so a page the engine
placed 8th can still be read; which of them are read is then decided here, cheaply and
locally: Okapi BM25 of each hit's title and snippet for the sub-question, on the same
tokeniser as ``web_fetch``'s passages and the ``corpus`` provider
(:func:`local2.retrieval.bm25_scores`), blended with the engine's own order, which
weighs more (:data:`ENGINE_WEIGHT`), so a snippet that happens to repeat the words does not
bury what the engine, which read the whole page, ranked first. Each hit also keeps how well
it matches beside the best match (``Why.match``, :func:`matches`): a read passes over a hit
that matches little, and stops short where none does.

Why BM25 and not the MiniLM embedder: a few dozen snippets cost microseconds and no memory
(``bench/research.py`` measures both); the embedder costs a model load and milliseconds per
snippet on two shared cores, and a multi-hop question's hops are named entities, which
lexical matching finds at least as well.
"""

from __future__ import annotations

from collections.abc import Sequence

from local2.research._state import Found, Why, url_key
from local2.retrieval import bm25_scores, terms

# The share of the score that is the engine's own order. A snippet is a weak signal beside
# an engine that read the whole page: on the multi-hop set (bench/evidence_recall.py, an
# engine ranking by BM25 over whole pages) a weight of 0.3 keeps 114 of 124 gold pages in the
# top 5 of the question's search against the engine's 124, 0.8 keeps 123 (and 95 of 95
# in the top 3); the snippet then decides between hits the engine placed close together.
ENGINE_WEIGHT = 0.8


def matches(texts: Sequence[str], query: str) -> list[float]:
    """Each text's BM25 for ``query`` as a share of the best one's, 0 to 1: how well it
    matches beside the others (1 for every text when none has a word of the query: no
    sign either way)."""
    lexical = bm25_scores([terms(t) for t in texts], set(terms(query)), k1=1.2, b=0.75)
    best = max(lexical, default=0.0)
    return [round(v / best, 4) if best > 0 else 1.0 for v in lexical]


def rerank_scores(texts: Sequence[str], query: str) -> list[float]:
    """Each text's score for ``query``, 0 to 1: its :func:`matches` share blended with its
    position (the engine's order: the first is 1, the last 0)."""
    n = len(texts)
    shares = matches(texts, query)
    return [
        round((1 - ENGINE_WEIGHT) * share + ENGINE_WEIGHT * (1.0 - i / n), 4)
        for i, share in enumerate(shares)
    ]


def rerank(hits: Sequence[Found], query: str, step: str) -> list[Found]:
    """``hits`` (in the engine's order) once per URL, best first for ``query``, each with
    :class:`Why` it ranks there (its engine rank, its score, the step and query)."""
    unique: list[Found] = []
    seen: set[str] = set()
    for hit in hits:
        key = url_key(hit["url"])
        if key not in seen:
            seen.add(key)
            unique.append(hit)
    texts = [f"{h['title']} {h['text']}" for h in unique]
    scores, shares = rerank_scores(texts, query), matches(texts, query)
    ranked: list[Found] = []
    for rank, (hit, score, share) in enumerate(zip(unique, scores, shares, strict=True), start=1):
        why = Why(found_by=step, query=query, rank=rank, score=score, match=share)
        item = hit.copy()
        item["why"] = why
        ranked.append(item)
    ranked.sort(key=lambda h: -h["why"]["score"])  # stable: ties keep the engine's order
    return ranked
