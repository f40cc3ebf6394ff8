"""Would memory recall gain from hybrid search? The 50 facts of ``bench/recall_quality.json``
as the rules keep them (third person), asked in other words: recall@1 and recall@3 of
vectors alone (what recall does), BM25 alone, and the two fused by reciprocal rank (k = 60),
in the same run, with the offline MiniLM embedder (or ``--embedder lexical``).

    .venv/bin/python bench/memory_hybrid.py
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
from pathlib import Path

from local2.config import load_settings
from local2.memory._embedders import make_embedder
from local2.memory._facts import rule_facts, third_person
from local2.retrieval import Bm25, fuse, terms

HERE = Path(__file__).resolve().parent


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)) or 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "lexical"])
    args = parser.parse_args()
    facts = json.loads((HERE / "recall_quality.json").read_text())["facts"]
    texts = []
    for f in facts:
        kept = rule_facts(f["said"])
        texts.append(kept[0].text if kept else third_person(f["said"]))
    settings = load_settings(
        overrides={
            "system": {"data_dir": tempfile.mkdtemp()},
            "memory": {"embedder": args.embedder},
        }
    )
    embedder = make_embedder(settings)
    vectors = embedder.embed_documents(texts)
    bm25 = Bm25([terms(t) for t in texts], k1=1.2, b=0.75)
    found: dict[str, list[int]] = {"vectors": [], "bm25": [], "hybrid": []}
    for n, f in enumerate(facts):
        q = embedder.embed_query(f["asked"])
        by_vector = sorted(range(len(texts)), key=lambda i: -cosine(q, vectors[i]))[:50]
        by_words = [i for i, _ in bm25.top(terms(f["asked"]), 50)]
        fused = [x.item for x in fuse([by_vector, by_words], k=60)]
        for name, ranking in (("vectors", by_vector), ("bm25", by_words), ("hybrid", fused)):
            found[name].append(ranking.index(n) + 1 if n in ranking else 99)
    print(f"{len(facts)} facts, embedder {embedder.name}\n")
    print("| recall | @1 | @3 | median rank |")
    print("|---|---:|---:|---:|")
    for name, ranks in found.items():
        at1 = sum(r == 1 for r in ranks) / len(ranks)
        at3 = sum(r <= 3 for r in ranks) / len(ranks)
        print(f"| {name} | {at1:.2f} | {at3:.2f} | {statistics.median(ranks):.0f} |")


if __name__ == "__main__":
    main()
