"""Reads the public retrieval sets that bench/public/build.py writes (BEIR's file layout).

    from load import load_beir           # with bench/public on sys.path
    corpus, queries, qrels = load_beir()  # the default: data/beir_hotpot_100

``corpus`` maps a document id to ``{"title", "text"}``, ``queries`` a query id to its text,
``qrels`` a query id to ``{document id: relevance}``. A missing set raises with the command
that builds it (the data is not in the repository: README.md beside this file says why).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT = HERE / "data" / "beir_hotpot_100"
HOTPOT = HERE / "data" / "hotpot_dev_100.json"
BUILD = "python bench/public/build.py --source dev_subsampled.jsonl (bench/public/README.md)"


def _need(path: Path) -> Path:
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: build it with {BUILD}")
    return path


def load_beir(
    path: Path = DEFAULT, split: str = "test"
) -> tuple[dict[str, dict[str, str]], dict[str, str], dict[str, dict[str, int]]]:
    """(corpus, queries, qrels) of a BEIR-style folder; only queries with judgements."""
    corpus: dict[str, dict[str, str]] = {}
    with _need(path / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            corpus[str(doc["_id"])] = {"title": doc.get("title", ""), "text": doc["text"]}
    qrels: dict[str, dict[str, int]] = {}
    with _need(path / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        rows = csv.reader(fh, delimiter="\t")
        next(rows)  # query-id, corpus-id, score
        for qid, did, score in rows:
            if int(score) > 0:
                qrels.setdefault(qid, {})[did] = int(score)
    queries: dict[str, str] = {}
    with _need(path / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if str(q["_id"]) in qrels:
                queries[str(q["_id"])] = q["text"]
    return corpus, queries, qrels


def load_hotpot(path: Path = HOTPOT) -> list[dict[str, Any]]:
    """The HotpotQA-format records (the distractor setting: 10 paragraphs a question)."""
    records: list[dict[str, Any]] = json.loads(_need(path).read_text(encoding="utf-8"))
    return records


if __name__ == "__main__":
    corpus, queries, qrels = load_beir()
    gold = sum(len(v) for v in qrels.values())
    print(f"{DEFAULT.name}: {len(corpus)} documents, {len(queries)} queries, {gold} judgements")
    print(f"{HOTPOT.name}: {len(load_hotpot())} questions")
