"""Hybrid search over a file index: BM25 and vectors, fused by reciprocal rank, and the
notes the best hits link to.

Each side ranks its best ``CANDIDATES`` chunks (vectors: Chroma's nearest by cosine; BM25:
:mod:`.lexical`, over the same chunks), and :func:`local2.retrieval.fuse` makes one ranking
of them. Then the ``LINKING`` best hits' links are followed: the files they name by title
("Felix Kelsorby" names ``Felix Kelsorby.md``, as a note's name is a link in a folder of
notes) make a third ranking, fused with the two. A question about "the actor who played
X" finds the page about X by its words, and the actor's own page through the name X's page
gives: measured on held-out multi-hop questions, it is what lifts all-gold-in-the-top-5
(``bench/folder_search.py``). Each hit keeps its rank on each side (why it was found), its
cosine similarity (read for a chunk only BM25 or a link found) and its best passage for the
query (:func:`local2.retrieval.best_passage`: the sentences that answer, not the chunk's
first lines).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from local2.files.lexical import Lexical
from local2.memory import Embedder
from local2.retrieval import Fused, best_passage, fuse

CANDIDATES = 50  # each side's ranking that is fused (at least 4 x k)
RRF_K = 60  # reciprocal-rank fusion's k (Cormack et al.; measured: bench/folder_search.py)
LINKING = 2  # the best hits whose links are followed (measured: 2 and 3 alike, 1 less)
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
    linked_rank: int | None = None  # 1-based rank among the files the best hits name
    passage: str = ""  # the chunk's best passage for the query


@dataclass(frozen=True)
class _Found:
    text: str
    meta: dict[str, Any]  # a chunk's Chroma metadata
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
    first = [f.item for f in fuse([by_vector, by_words], k=RRF_K)][:LINKING]
    by_links: list[str] = []
    for cid in first:
        row = lexical.row(cid)
        if row is not None:
            by_links += [c for c in lexical.linked(row.text, first) if c not in by_links]
    by_links = [c for c in by_links if files is None or _file_of(lexical, c) in files]
    for cid in by_words + by_links:
        row = lexical.row(cid)
        if cid not in found and row is not None:
            found[cid] = _Found(row.text, row.meta, None)
    chosen: list[tuple[Fused[str], str]] = []  # the best k still allowed, with their paths
    for fused in fuse([by_vector, by_words, by_links], k=RRF_K):  # a tie: the nearer first
        hit = found.get(fused.item)
        path = allowed(str(hit.meta.get("file", ""))) if hit is not None and hit.text else None
        if path is not None:  # None: gone, or no longer allowed
            chosen.append((fused, path))
        if len(chosen) >= k:
            break
    _read_similarities(collection, vector, found, [f.item for f, _ in chosen])
    return [_hit(found[f.item], f, path, query) for f, path in chosen]


def _file_of(lexical: Lexical, cid: str) -> str | None:
    row = lexical.row(cid)
    return None if row is None else str(row.meta.get("file_id") or "")


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


def _read_similarities(
    collection: Any, vector: Sequence[float], found: dict[str, _Found], ids: list[str]
) -> None:
    """The cosine similarity of those of ``ids`` the vectors did not find, from their
    stored vectors."""
    missing = [cid for cid in ids if found[cid].similarity is None]
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


def _hit(found: _Found, fused: Fused[str], path: str, query: str) -> SearchHit:
    meta = found.meta
    vector_rank, bm25_rank, linked_rank = fused.ranks
    return SearchHit(
        path=path,
        start_line=int(meta["start_line"]),
        end_line=int(meta["end_line"]),
        similarity=round(found.similarity or 0.0, 4),
        text=found.text,
        page=int(meta.get("page") or 0) or None,
        file_id=str(meta.get("file_id") or ""),
        unit=str(meta.get("unit") or "page"),
        score=round(fused.score, 5),
        bm25_rank=bm25_rank,
        vector_rank=vector_rank,
        linked_rank=linked_rank,
        passage=best_passage(found.text, query, PASSAGE_CHARS),
    )
