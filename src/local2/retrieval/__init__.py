"""Retrieval: finding text for everyone, one part.

The one tokeniser (:func:`terms`), the one BM25 (:class:`Bm25`, on bm25s), the one sentence
splitter (:func:`sentences`), the number patterns, reciprocal-rank fusion (:func:`fuse`),
and the passages of a text most relevant to a question (:func:`relevance`,
:func:`pick_passages`, :func:`best_passage`). Page passages, research's rerank and second
hop, the ``corpus`` provider, citation checks, the critic's grounding, eval evidence, memory
facts and the hybrid search over a person's own text all use it;
``tests/test_retrieval_one_part.py`` fails for a second copy anywhere else.
"""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "FIGURE": "local2.retrieval.quantities",
    "NUMBER": "local2.retrieval.quantities",
    "MAX_PASSAGE": "local2.retrieval.passages",
    "Bm25": "local2.retrieval.bm25",
    "Fused": "local2.retrieval.fusion",
    "best_passage": "local2.retrieval.passages",
    "bm25_scores": "local2.retrieval.bm25",
    "choose": "local2.retrieval.passages",
    "ends_sentence": "local2.retrieval.text",
    "figures": "local2.retrieval.quantities",
    "fuse": "local2.retrieval.fusion",
    "normal_number": "local2.retrieval.quantities",
    "numbers": "local2.retrieval.quantities",
    "pick_passages": "local2.retrieval.passages",
    "relevance": "local2.retrieval.passages",
    "sentences": "local2.retrieval.text",
    "split_passages": "local2.retrieval.passages",
    "terms": "local2.retrieval.text",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "FIGURE",
    "MAX_PASSAGE",
    "NUMBER",
    "Bm25",
    "Fused",
    "best_passage",
    "bm25_scores",
    "choose",
    "ends_sentence",
    "figures",
    "fuse",
    "normal_number",
    "numbers",
    "pick_passages",
    "relevance",
    "sentences",
    "split_passages",
    "terms",
]
