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

from local2.retrieval._bm25 import Bm25, bm25_scores
from local2.retrieval._fusion import Fused, fuse
from local2.retrieval._passages import (
    MAX_PASSAGE,
    best_passage,
    choose,
    pick_passages,
    relevance,
    split_passages,
)
from local2.retrieval._quantities import NUMBER, normal_number, numbers, unstated_numbers
from local2.retrieval._support import (
    FRAME_WORDS,
    Support,
    as_written,
    check_support,
    names,
    unstated_names,
)
from local2.retrieval._text import ends_sentence, sentences, terms, words

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
