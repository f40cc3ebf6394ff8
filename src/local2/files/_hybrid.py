"""Hybrid search over a file index: BM25 and vectors, fused by reciprocal rank, and the
notes the best hits link to.

Each side ranks its best ``CANDIDATES`` chunks (vectors: Chroma's nearest by cosine; BM25:
:mod:`._lexical`, over the same chunks), and :func:`local2.retrieval.fuse` makes one ranking
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

from local2.files._lexical import Lexical
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
    linked_from: str | None = None  # the display path of the best hit that names it
    passage: str = ""  # the chunk's best passage for the query

    def found_by(self, named: str = "linked from {}", named_rank: str = "linked #{}") -> str:
        """Why it was found, as ``local2 search`` says it: ``words #2, meaning #1`` (its rank
        by BM25 and by similarity; a side that missed it is left out), or ``linked from
        notes/X.md`` (a best hit names it by its title: ``named`` with that hit's path, or
        ``named_rank`` with its rank among the linked files when the path is not known)."""
        ranks = (("words", self.bm25_rank), ("meaning", self.vector_rank))
        said = [f"{side} #{rank}" for side, rank in ranks if rank is not None]
        if self.linked_from:
            said.append(named.format(self.linked_from))
        elif self.linked_rank is not None:
            said.append(named_rank.format(self.linked_rank))
        return ", ".join(said)


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
    linking: int = 0,
) -> list[SearchHit]:
    """The ``k`` best chunks for ``query`` in ``collection``, both sides fused (``files``:
    only these file ids; ``allowed``: a chunk's file's display path, None once the sandbox no
    longer lets it be read; ``linking``: the best hits whose links are followed,
    :data:`LINKING` with ``files.link_notes``, 0 for notes that do not link by name)."""
    n = max(CANDIDATES, 4 * k)
    vector = embedder.embed_query(query)
    similar = _nearest(collection, lexical, vector, n, files)
    by_vector = list(similar)
    by_words = [cid for cid, _ in lexical.search(query, n, files)]
    both = [f.item for f in fuse([by_vector, by_words], k=RRF_K)]
    first = both[:linking]
    # One read for the best hits' links and, mostly, for the hits shown: on a Chroma server
    # each read is a round trip (a hit only a link found is read after, if shown).
    found = _read(collection, both[: k + linking], similar, vector)
    named_by: dict[str, str] = {}  # a file's chunk -> the best hit that names it
    for cid in first:
        if cid in found:
            for named in lexical.linked(found[cid].text, first):
                named_by.setdefault(named, cid)
    by_links = [c for c in named_by if files is None or _file_of(lexical, c) in files]
    chosen: list[tuple[Fused[str], str]] = []  # the best k still allowed, with their paths
    for fused in fuse([by_vector, by_words, by_links], k=RRF_K):  # a tie: the nearer first
        row = lexical.row(fused.item)
        path = allowed(row.file) if row is not None else None
        if path is not None:  # None: gone, or no longer allowed
            chosen.append((fused, path))
        if len(chosen) >= k:
            break
    unread = [f.item for f, _ in chosen if f.item not in found]
    found |= _read(collection, unread, similar, vector)
    return [
        _hit(found[f.item], f, path, query, _named_from(lexical, allowed, named_by.get(f.item)))
        for f, path in chosen
        if f.item in found
    ]


def _named_from(
    lexical: Lexical, allowed: Callable[[str], str | None], cid: str | None
) -> str | None:
    """The display path of the hit ``cid`` that names a file (None: none does)."""
    row = None if cid is None else lexical.row(cid)
    return None if row is None else allowed(row.file)


def _file_of(lexical: Lexical, cid: str) -> str | None:
    row = lexical.row(cid)
    return None if row is None else row.file_id


def _nearest(
    collection: Any,
    lexical: Lexical,
    vector: list[float],
    n: int,
    files: Collection[str] | None,
) -> dict[str, float]:
    """Chroma's nearest chunks, best first, with their cosine similarity: none with nothing
    in common with the query (cosine distance 1 or more), and only chunks the BM25 side
    has (not an empty marker). Only distances are read: a chunk's text is read for a hit."""
    total = int(collection.count())
    where = None if files is None else {"file_id": {"$in": sorted(files)}}
    result = collection.query(
        query_embeddings=[vector], n_results=min(total, n), where=where, include=["distances"]
    )
    ids, dists = (result.get("ids") or [[]])[0], (result.get("distances") or [[]])[0]
    return {
        cid: 1.0 - float(dist)
        for cid, dist in zip(ids, dists, strict=True)
        if float(dist) < 1.0 and lexical.row(cid) is not None
    }


def _read(
    collection: Any, ids: list[str], similar: dict[str, float], vector: Sequence[float]
) -> dict[str, _Found]:
    """The text and metadata of the chunks ``ids`` (one Chroma read), with each one's cosine
    similarity: the vector search's, else from its stored vector. A chunk gone since (or an
    empty one) is left out."""
    if not ids:
        return {}
    include = ["documents", "metadatas"]
    if any(cid not in similar for cid in ids):
        include.append("embeddings")
    got = collection.get(ids=ids, include=include)
    stored = got.get("embeddings")
    vectors = [None] * len(got["ids"]) if stored is None else list(stored)
    found = {}
    for cid, text, meta, kept in zip(
        got["ids"], got["documents"] or [], got["metadatas"] or [], vectors, strict=True
    ):
        if text:
            similarity = similar.get(cid)
            if similarity is None and kept is not None:
                similarity = _cosine(vector, kept)
            found[cid] = _Found(text, dict(meta), similarity)
    return found


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """A plain float, also for Chroma's stored vectors (numpy arrays): a numpy scalar in a
    turn's document hits cannot be checkpointed."""
    dot = float(sum(x * y for x, y in zip(a, b, strict=True)))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _hit(
    found: _Found, fused: Fused[str], path: str, query: str, linked_from: str | None
) -> SearchHit:
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
        linked_from=linked_from,
        passage=best_passage(found.text, query, PASSAGE_CHARS),
    )
