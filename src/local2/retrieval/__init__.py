"""Retrieval: finding text for everyone, one part.

The one tokeniser (:func:`terms`; :func:`words`: every word as written), the one BM25
(:class:`Bm25`, on bm25s), the one sentence splitter (:func:`sentences`), the number
patterns, reciprocal-rank fusion (:func:`fuse`), the passages of a text most relevant
to a question (:func:`relevance`, :func:`pick_passages`, :func:`best_passage`), and whether
a claim's numbers, names and content words are in its evidence (:func:`check_support`,
:func:`unstated_numbers`: research's verify and the critic's grounding check). Page
passages, research's rerank and second hop, the ``corpus`` provider, citation checks, the
critic's grounding, eval evidence, memory facts, the embedded model's loop guard and the
hybrid search over a person's own text all use it; ``tests/retrieval/test_retrieval_one_part.py``
fails for a second copy anywhere else.
"""

from local2.retrieval._relevance import (
    FRAME_WORDS,
    MAX_PASSAGE,
    Bm25,
    Fused,
    Support,
    as_written,
    best_passage,
    bm25_scores,
    check_support,
    choose,
    fuse,
    names,
    pick_passages,
    relevance,
    split_passages,
    unstated_names,
)
from local2.retrieval._text import (
    NUMBER,
    ends_sentence,
    normal_number,
    numbers,
    sentences,
    terms,
    unstated_numbers,
    words,
)

__all__ = [
    "FRAME_WORDS",
    "MAX_PASSAGE",
    "NUMBER",
    "Bm25",
    "Fused",
    "Support",
    "as_written",
    "best_passage",
    "bm25_scores",
    "check_support",
    "choose",
    "ends_sentence",
    "fuse",
    "names",
    "normal_number",
    "numbers",
    "pick_passages",
    "relevance",
    "sentences",
    "split_passages",
    "terms",
    "unstated_names",
    "unstated_numbers",
    "words",
]
