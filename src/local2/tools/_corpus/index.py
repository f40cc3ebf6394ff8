"""BM25 over a corpus's passages (:class:`local2.retrieval.Bm25`): the same query gives the
same hits in the same order, in every process.

Documents are cut into passages (:func:`local2.retrieval.split_passages`, the pieces
``web_fetch`` also chooses among) and tokenised by the same ``terms`` rule (lower case,
stopwords out, single digits kept, plurals folded), so a query meets a passage as it meets a
fetched page. BM25 scores every passage for the query's known terms from a sparse matrix
built once; a search returns the best passage of each of the top documents. Ties are broken
by position in the corpus, and the vocabulary is numbered in first-seen order, so nothing
depends on hash order: the same run gets the same evidence.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from local2.retrieval import Bm25, split_passages, terms
from local2.tools._corpus.documents import CorpusDocument, corpus_name, load_documents, signature
from local2.tools._corpus.urls import corpus_url

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

CACHED_CORPORA = 4  # corpora kept open per process (a search and a fetch share one)
# BM25 over a corpus's passages: bm25s' own defaults, which the corpus was measured with.
CORPUS_K1, CORPUS_B = 1.5, 0.75


@dataclass(frozen=True)
class CorpusHit:
    """A document found for a query, with its best passage and that passage's score."""

    document: CorpusDocument
    url: str
    passage: str
    score: float


class CorpusIndex:
    """A corpus, searchable: built once from its documents, then read by any thread."""

    def __init__(self, name: str, documents: Sequence[CorpusDocument]) -> None:
        self.name = name
        self.documents = list(documents)
        self._by_id = {d.id: i for i, d in enumerate(self.documents)}
        self._by_folded: dict[str, int] = {}
        for i, doc in enumerate(self.documents):
            self._by_folded.setdefault(_fold(doc.id), i)
        for i, doc in enumerate(self.documents):
            self._by_folded.setdefault(_fold(doc.title), i)
        self.passages: list[str] = []
        self._owner: list[int] = []  # passage -> document
        for i, doc in enumerate(self.documents):
            for passage in split_passages(doc.text) or [doc.title]:
                self.passages.append(passage)
                self._owner.append(i)
        self._bm25 = Bm25([terms(p) for p in self.passages], k1=CORPUS_K1, b=CORPUS_B)
        self.vocab = self._bm25.vocab

    def __len__(self) -> int:
        return len(self.documents)

    @property
    def matrix_bytes(self) -> int:
        """The size of the BM25 score matrix (the index, without the texts it keeps)."""
        return self._bm25.matrix_bytes

    def url(self, doc: CorpusDocument) -> str:
        return corpus_url(self.name, doc.id)

    def search(self, query: str, k: int) -> list[CorpusHit]:
        """The ``k`` best documents for ``query`` (fewer when fewer match any of its words)."""
        # numpy (about 0.1 s of imports) loads with the first search, as in local2.retrieval's
        # Bm25: this module is imported with the web tools (serve.py: corpus_fetch).
        import numpy as np

        wanted = [t for t in dict.fromkeys(terms(query)) if t in self.vocab]
        if not wanted or k < 1:
            return []
        scores = self._bm25.scores(wanted)
        matching = int(np.count_nonzero(scores > 0))
        room = min(matching, 8 * k)
        while True:
            hits = self._best_documents(scores, room, k)
            if len(hits) == k or room >= matching:
                return hits
            room = min(matching, room * 4)

    def _best_documents(self, scores: NDArray[np.float32], room: int, k: int) -> list[CorpusHit]:
        """The best passage of each of the top ``k`` documents among the top ``room``
        passages (and any tied with the last), highest score first, earlier passage first."""
        import numpy as np  # with the first search: see search

        if room <= 0:
            return []
        floor = -np.partition(-scores, room - 1)[room - 1]
        chosen = np.flatnonzero(scores >= max(floor, np.float32(1e-9)))
        order = chosen[np.lexsort((chosen, -scores[chosen]))]
        hits: list[CorpusHit] = []
        seen: set[int] = set()
        for index in order.tolist():
            owner = self._owner[index]
            if owner in seen:
                continue
            seen.add(owner)
            doc = self.documents[owner]
            hits.append(CorpusHit(doc, self.url(doc), self.passages[index], float(scores[index])))
            if len(hits) == k:
                break
        return hits

    def document(self, doc_id: str) -> CorpusDocument | None:
        """The document with this id; else the one whose id or title matches it once case,
        spaces and underscores are set aside (how a model tends to retype a name)."""
        index = self._by_id.get(doc_id)
        if index is None:
            index = self._by_folded.get(_fold(doc_id))
        return None if index is None else self.documents[index]


def _fold(text: str) -> str:
    return " ".join(text.replace("_", " ").casefold().split())


_cache: dict[Path, tuple[tuple[object, ...], CorpusIndex]] = {}
_cache_lock = threading.Lock()


def open_corpus(path: Path) -> CorpusIndex:
    """The corpus at ``path``, indexed once per process and again only when its files change."""
    path = Path(path).expanduser().resolve()
    with _cache_lock:
        mark = signature(path)
        known = _cache.get(path)
        if known is not None and known[0] == mark:
            return known[1]
        index = CorpusIndex(corpus_name(path), load_documents(path))
        _cache.pop(path, None)
        _cache[path] = (mark, index)
        while len(_cache) > CACHED_CORPORA:
            _cache.pop(next(iter(_cache)))
        return index
