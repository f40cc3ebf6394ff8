"""The one BM25: bm25s (MIT, numpy only), over documents given as term lists.

Its scores are Okapi BM25's with Lucene's idf, ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b +
b * len / avg))``: bm25s' "lucene" variant times ``k1 + 1``, so a score means what the
hand-written one it replaced meant. ``k1`` and ``b`` are named by each caller: a snippet
rerank, a page's passages and a folder of notes are different collections. The vocabulary
is numbered in first-seen order and ties are broken by position, so nothing depends on
hash order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


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
