"""Retrieval: finding text for everyone, one part.

The one tokeniser (:func:`terms`; :func:`words`: every word as written), the one BM25
(:class:`Bm25`, on bm25s), the one sentence splitter (:func:`sentences`), the number
patterns, reciprocal-rank fusion (:func:`fuse`), the passages of a text most relevant
to a question (:func:`relevance`, :func:`pick_passages`, :func:`best_passage`), and whether
a claim's numbers, names and content words are in its evidence (:func:`check_support`,
:func:`unstated_numbers`: research's verify and the critic's grounding check). Page
passages, research's rerank and second hop, the ``corpus`` provider, citation checks, the
critic's grounding, eval evidence, memory facts, the embedded model's loop guard and the
hybrid search over a person's own text all use it; ``tests/test_retrieval_one_part.py``
fails for a second copy anywhere else.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.retrieval.bm25 import Bm25 as Bm25
    from local2.retrieval.bm25 import bm25_scores as bm25_scores
    from local2.retrieval.fusion import Fused as Fused
    from local2.retrieval.fusion import fuse as fuse
    from local2.retrieval.passages import MAX_PASSAGE as MAX_PASSAGE
    from local2.retrieval.passages import best_passage as best_passage
    from local2.retrieval.passages import choose as choose
    from local2.retrieval.passages import pick_passages as pick_passages
    from local2.retrieval.passages import relevance as relevance
    from local2.retrieval.passages import split_passages as split_passages
    from local2.retrieval.quantities import NUMBER as NUMBER
    from local2.retrieval.quantities import normal_number as normal_number
    from local2.retrieval.quantities import numbers as numbers
    from local2.retrieval.quantities import unstated_numbers as unstated_numbers
    from local2.retrieval.support import FRAME_WORDS as FRAME_WORDS
    from local2.retrieval.support import Support as Support
    from local2.retrieval.support import as_written as as_written
    from local2.retrieval.support import check_support as check_support
    from local2.retrieval.support import names as names
    from local2.retrieval.support import unstated_names as unstated_names
    from local2.retrieval.text import ends_sentence as ends_sentence
    from local2.retrieval.text import sentences as sentences
    from local2.retrieval.text import terms as terms
    from local2.retrieval.text import words as words
else:
    __getattr__ = lazy_face(__name__, __file__)
