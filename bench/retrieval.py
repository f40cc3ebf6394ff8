"""Retrieval on a public set: vectors (the MiniLM on numpy and on onnxruntime), BM25, the two
fused, and reranked, all in one run over the same paragraphs (issue 44).

The set is BEIR-style (``bench/public``: real HotpotQA dev questions over the 10 real
Wikipedia paragraphs of each, 1,000 paragraphs for 100 questions; a paragraph is found by
its title and text). Every method ranks the whole corpus for every question. Reported per
method: recall@5 (the share of a question's gold paragraphs in its top 5), all@5 (questions
with every gold paragraph in the top 5), nDCG@10, the index time per 1,000 paragraphs (wall
and CPU seconds: on a shared machine CPU time is the steadier figure) and the query time
(median and p95, wall). Ratios are against the baseline, the numpy MiniLM that was the
offline embedder before.

- **vectors**: ``MiniLMEmbedder`` with ``runtime="numpy"`` (float32, the old runtime) and
  ``runtime="onnx"`` (int8, ``local2.memory._embedders``); cosine over all paragraphs.
- **bm25**: the product's BM25 (``local2.retrieval``: ``terms``, the one tokeniser, and
  ``Bm25`` on bm25s, with the files index's k1 1.2 and b 0.75), over the same title + text,
  as the files index's BM25 side ranks chunks; beside it, for reference, bm25s with its own
  tokeniser and defaults (k1 1.5, b 0.75, English stopwords).
- **hybrid**: the product's reciprocal rank fusion (``local2.retrieval.fuse``, k = 60, the
  files index's) of the product BM25's and the vectors' top 100. (The files index then
  follows links between notes: ``bench/folder_search.py`` measures that on files.)
- **reranked**: a cross-encoder over the hybrid top 20, if one whose weights ship inside a
  package is installed (none is: the row says so).

    .venv/bin/python bench/retrieval.py [--set bench/public/data/beir_hotpot_100] [--limit 30]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "public"))

from load import DEFAULT, load_beir  # noqa: E402

from local2.files._index import (  # noqa: E402
    FILES_B,
    FILES_K1,
    RRF_K,
)
from local2.memory._embedders import MiniLMEmbedder  # noqa: E402
from local2.retrieval import Bm25, fuse, terms  # noqa: E402

FUSE_DEPTH = 100
BM25 = "bm25 (local2.retrieval: terms + Bm25, k1 1.2, b 0.75)"
Ranker = Callable[[str], list[int]]


@dataclass
class Row:
    name: str
    index_wall: float = 0.0  # seconds for the whole corpus
    index_cpu: float = 0.0
    query_ms: list[float] = field(default_factory=list)
    recall5: float = 0.0
    all5: float = 0.0
    ndcg10: float = 0.0
    note: str = ""


def timed(work: Callable[[], object]) -> tuple[object, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = work()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def score(row: Row, ranked: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> None:
    recall, complete, ndcg = [], [], []
    for qid, docs in ranked.items():
        gold = set(qrels[qid])
        found = len(gold & set(docs[:5]))
        recall.append(found / len(gold))
        complete.append(found == len(gold))
        dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(docs[:10]) if d in gold)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
        ndcg.append(dcg / ideal)
    row.recall5, row.all5 = statistics.mean(recall), statistics.mean(complete)
    row.ndcg10 = statistics.mean(ndcg)


def run_queries(
    row: Row, rank: Ranker, ids: list[str], queries: dict[str, str]
) -> dict[str, list[str]]:
    ranked = {}
    for qid, text in queries.items():
        started = time.perf_counter()
        order = rank(text)
        row.query_ms.append((time.perf_counter() - started) * 1000)
        ranked[qid] = [ids[i] for i in order[:FUSE_DEPTH]]
    return ranked


def vector_ranker(row: Row, runtime: str, texts: list[str]) -> Ranker:
    embedder = MiniLMEmbedder(runtime=runtime)
    embedder.model  # noqa: B018 - load the weights outside the timed indexing
    embedder.embed_query("warm up")
    matrix, row.index_wall, row.index_cpu = timed(
        lambda: np.asarray(embedder.embed_documents(texts), dtype=np.float32)
    )
    assert isinstance(matrix, np.ndarray)

    def rank(query: str) -> list[int]:
        scores = matrix @ np.asarray(embedder.embed_query(query), dtype=np.float32)
        top = np.argpartition(-scores, min(FUSE_DEPTH, len(scores) - 1))[:FUSE_DEPTH]
        return [int(i) for i in top[np.argsort(-scores[top])]]

    return rank


def product_bm25_ranker(row: Row, texts: list[str]) -> Ranker:
    """The files index's BM25: every text through ``terms``, ``Bm25`` with its k1 and b."""
    index, row.index_wall, row.index_cpu = timed(
        lambda: Bm25([terms(t) for t in texts], k1=FILES_K1, b=FILES_B)
    )
    assert isinstance(index, Bm25)

    def rank(query: str) -> list[int]:
        return [i for i, _ in index.top(terms(query), FUSE_DEPTH)]

    return rank


def bm25s_ranker(row: Row, texts: list[str]) -> Ranker:
    """bm25s as it comes (its tokeniser, English stopwords, k1 1.5): the reference."""
    import bm25s

    def build() -> bm25s.BM25:
        retriever = bm25s.BM25(k1=1.5, b=0.75)
        retriever.index(
            bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False
        )
        return retriever

    retriever, row.index_wall, row.index_cpu = timed(build)
    assert isinstance(retriever, bm25s.BM25)
    depth = min(FUSE_DEPTH, len(texts))

    def rank(query: str) -> list[int]:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        docs, _ = retriever.retrieve(tokens, k=depth, show_progress=False, n_threads=1)
        return [int(i) for i in docs[0]]

    return rank


def fused(rankers: Sequence[Ranker]) -> Ranker:
    """The product's reciprocal rank fusion of the rankings (each one's top ``FUSE_DEPTH``)."""

    def rank(query: str) -> list[int]:
        rankings = [ranker(query)[:FUSE_DEPTH] for ranker in rankers]
        return [f.item for f in fuse(rankings, k=RRF_K)]

    return rank


def subset(
    corpus: dict[str, dict[str, str]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    limit: int,
) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """The first ``limit`` questions and the paragraphs that come with them (the corpus is in
    question order), their gold ones always included."""
    if not limit or limit >= len(queries):
        return corpus, queries
    kept = dict(list(queries.items())[:limit])
    size = max(1, len(corpus) * limit // len(queries))
    wanted = set(list(corpus)[:size]) | {d for q in kept for d in qrels[q]}
    return {d: doc for d, doc in corpus.items() if d in wanted}, kept


def reranker_note() -> str:
    """Why there is no reranked row: no cross-encoder's weights ship inside a package here."""
    from importlib.util import find_spec

    if find_spec("flashrank") is not None:
        return "flashrank is installed but fetches its model at first use: not run"
    return "no cross-encoder whose weights ship inside a package is installed: not run"


def measure(set_path: Path, limit: int) -> tuple[list[Row], int, int]:
    corpus, queries, qrels = load_beir(set_path)
    corpus, queries = subset(corpus, queries, qrels, limit)
    ids = list(corpus)
    texts = [f"{corpus[d]['title']}\n{corpus[d]['text']}" for d in ids]
    rows: list[Row] = []
    rankers: dict[str, Ranker] = {}
    for name, build in (
        ("vectors, MiniLM numpy (baseline)", lambda r: vector_ranker(r, "numpy", texts)),
        ("vectors, MiniLM onnx int8", lambda r: vector_ranker(r, "onnx", texts)),
        (BM25, lambda r: product_bm25_ranker(r, texts)),
        ("bm25s, its own tokeniser and defaults (reference)", lambda r: bm25s_ranker(r, texts)),
    ):
        row = Row(name)
        rankers[name] = build(row)
        score(row, run_queries(row, rankers[name], ids, queries), qrels)
        rows.append(row)
        print(f"  {name}: done", file=sys.stderr, flush=True)
    bm25 = rankers[BM25]
    for vectors, label in ((rows[0], "numpy"), (rows[1], "onnx int8")):
        row = Row(f"hybrid (local2.retrieval.fuse, k={RRF_K}), bm25 + MiniLM {label}")
        row.index_wall = vectors.index_wall + rows[2].index_wall
        row.index_cpu = vectors.index_cpu + rows[2].index_cpu
        ranker = fused([bm25, rankers[vectors.name]])
        score(row, run_queries(row, ranker, ids, queries), qrels)
        rows.append(row)
    rows.append(Row("reranked (hybrid top 20)", note=reranker_note()))
    return rows, len(ids), len(queries)


def table(rows: list[Row], paragraphs: int) -> str:
    base = rows[0]
    lines = [
        "| method | recall@5 | all@5 | nDCG@10 | index s / 1,000 (wall) | CPU s / 1,000 "
        "| paragraphs/s (CPU) | x baseline (CPU) | query ms p50 | query ms p95 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        if not row.query_ms:
            lines.append(f"| {row.name} | {row.note} | | | | | | | | |")
            continue
        per_k = 1000 / paragraphs
        rate = paragraphs / row.index_cpu if row.index_cpu else float("inf")
        ratio = base.index_cpu / row.index_cpu if row.index_cpu else float("inf")
        q = sorted(row.query_ms)
        p95 = q[min(len(q) - 1, int(0.95 * len(q)))]
        lines.append(
            f"| {row.name} | {row.recall5:.3f} | {row.all5:.2f} | {row.ndcg10:.3f} "
            f"| {row.index_wall * per_k:.1f} | {row.index_cpu * per_k:.1f} | {rate:.0f} "
            f"| {ratio:.1f} | {statistics.median(q):.1f} | {p95:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT, help="a BEIR-style folder")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    args = parser.parse_args()
    rows, paragraphs, questions = measure(args.set, args.limit)
    print(f"{args.set.name}: {questions} questions over {paragraphs} paragraphs\n")
    print(table(rows, paragraphs))


if __name__ == "__main__":
    main()
