"""Hybrid search over a file index: BM25 and vectors, fused by reciprocal rank.

Each side ranks its best ``CANDIDATES`` chunks (vectors: Chroma's nearest by cosine; BM25:
:mod:`.lexical`, over the same chunks), :func:`local2.retrieval.fuse` makes one ranking of
them, and each hit keeps its rank on both sides (why it was found), its cosine similarity
(read for a chunk only BM25 found) and its best passage for the query
(:func:`local2.retrieval.best_passage`: the sentences that answer, not the chunk's first
lines). Measured by ``bench/folder_search.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from local2.files.lexical import Lexical
from local2.memory.embeddings import Embedder
from local2.retrieval.fusion import fuse
from local2.retrieval.passages import best_passage

CANDIDATES = 50  # each side's ranking that is fused (at least 4 x k)
RRF_K = 60  # reciprocal-rank fusion's k (Cormack et al.; measured: bench/folder_search.py)
PASSAGE_CHARS = 360  # a hit's passage, as search_files shows it


@dataclass
class SearchHit:
    path: str  # display path, e.g. notes/budget.md
    start_line: int  # lines of the file (of its page, for a document)
    end_line: int
    similarity: float  # cosine similarity of the chunk to the query
    text: str  # the whole chunk
    page: int | None = None  # a document's page (slide, chapter)
    file_id: str = ""
    unit: str = "page"  # page, slide or chapter
    score: float = 0.0  # the fused score (higher is better)
    bm25_rank: int | None = None  # 1-based rank by BM25 (None: not among its candidates)
    vector_rank: int | None = None  # 1-based rank by similarity (None: not among them)
    passage: str = ""  # the chunk's best passage for the query


@dataclass(frozen=True)
class _Found:
    text: str
    meta: dict[str, Any]
    similarity: float | None


def search(
    collection: Any,
    embedder: Embedder,
    lexical: Lexical,
    allowed: Callable[[str], str | None],
    query: str,
    k: int,
    files: Collection[str] | None = None,
) -> list[SearchHit]:
    """The ``k`` best chunks for ``query`` in ``collection``, both sides fused (``files``:
    only these file ids; ``allowed``: a chunk's file's display path, None once the sandbox no
    longer lets it be read)."""
    n = max(CANDIDATES, 4 * k)
    vector = embedder.embed_query(query)
    found: dict[str, _Found] = {}
    by_vector = _nearest(collection, lexical, vector, n, files, found)
    by_words = [cid for cid, _ in lexical.search(query, n, files)]
    for cid in by_words:
        row = lexical.row(cid)
        if cid not in found and row is not None:
            found[cid] = _Found(row.text, row.meta, None)
    _read_similarities(collection, vector, found)
    hits: list[SearchHit] = []
    for fused in fuse([by_vector, by_words], k=RRF_K):  # a tie: the nearer one first
        hit = _hit(found.get(fused.item), allowed, query)
        if hit is None:
            continue
        hit.score = round(fused.score, 5)
        hit.vector_rank, hit.bm25_rank = fused.ranks
        hits.append(hit)
        if len(hits) >= k:
            break
    return hits


def _nearest(
    collection: Any,
    lexical: Lexical,
    vector: list[float],
    n: int,
    files: Collection[str] | None,
    found: dict[str, _Found],
) -> list[str]:
    """Chroma's nearest chunks (ids, best first), noted in ``found``: none with nothing in
    common with the query (cosine distance 1 or more) and no empty marker. Only distances
    are read: the chunks' text and metadata are the BM25 side's already (a third of the
    query's time, measured)."""
    total = int(collection.count())
    where = None if files is None else {"file_id": {"$in": sorted(files)}}
    result = collection.query(
        query_embeddings=[vector], n_results=min(total, n), where=where, include=["distances"]
    )
    ranked = []
    ids, dists = (result.get("ids") or [[]])[0], (result.get("distances") or [[]])[0]
    for cid, dist in zip(ids, dists, strict=True):
        row = lexical.row(cid)  # None: an empty marker (or written since the side was read)
        if row is not None and float(dist) < 1.0:
            found[cid] = _Found(row.text, row.meta, 1.0 - float(dist))
            ranked.append(cid)
    return ranked


def _read_similarities(collection: Any, vector: Sequence[float], found: dict[str, _Found]) -> None:
    """The cosine similarity of the chunks only BM25 found, from their stored vectors."""
    missing = [cid for cid, f in found.items() if f.similarity is None]
    if not missing:
        return
    got = collection.get(ids=missing, include=["embeddings"])
    stored = got.get("embeddings")
    vectors = [] if stored is None else list(stored)
    for cid, stored_vector in zip(got["ids"], vectors, strict=True):
        f = found[cid]
        found[cid] = _Found(f.text, f.meta, _cosine(vector, stored_vector))


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _hit(
    found: _Found | None, allowed: Callable[[str], str | None], query: str
) -> SearchHit | None:
    if found is None or not found.text:
        return None
    meta = found.meta
    path = allowed(str(meta.get("file", "")))
    if path is None:  # gone, or no longer allowed
        return None
    return SearchHit(
        path=path,
        start_line=int(meta["start_line"]),
        end_line=int(meta["end_line"]),
        similarity=round(found.similarity or 0.0, 4),
        text=found.text,
        page=int(meta.get("page") or 0) or None,
        file_id=str(meta.get("file_id") or ""),
        unit=str(meta.get("unit") or "page"),
        passage=best_passage(found.text, query, PASSAGE_CHARS),
    )
