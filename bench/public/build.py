"""Builds the public retrieval sets of bench/public/ from real HotpotQA records (issue 44).

The input is IRCoT's processed HotpotQA dev subsample (``dev_subsampled.jsonl``: 500 dev
questions of the distractor setting, each with its 10 real Wikipedia paragraphs and which of
them support the answer). bench/public/README.md says where it is published and why the
built files are not in the repository. Two sets are written under ``--out`` (by default
bench/public/data/):

- ``hotpot_dev_<N>.json``: the first ``--questions`` records in HotpotQA's own JSON format
  (``_id``, ``question``, ``answer``, ``supporting_facts``, ``context``), which
  ``local2 eval`` reads. IRCoT joined each paragraph's sentences with a space, so a double
  space splits them again exactly. It keeps which *paragraphs* support an answer, not which
  sentences: every sentence of a supporting paragraph is listed as a supporting fact.
- ``beir_hotpot_<N>/``: the same paragraphs as a BEIR retrieval set: ``corpus.jsonl``
  (``_id``, ``title``, ``text``; one document per distinct title), ``queries.jsonl``
  (``_id``, ``text``) and ``qrels/test.tsv`` (query-id, corpus-id, score: the gold titles).

    .venv/bin/python bench/public/build.py --source dev_subsampled.jsonl [--questions 100]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "data"


def doc_id(title: str) -> str:
    """A stable corpus id for a Wikipedia title (titles are unique within the set)."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:48]
    return f"{slug}-{hashlib.sha1(title.encode()).hexdigest()[:8]}"


def sentences(paragraph: str) -> list[str]:
    """HotpotQA's sentence list back from IRCoT's text (joined by ' ', each after the first
    starting with a space of its own)."""
    parts = paragraph.split("  ")
    return [parts[0]] + [" " + p for p in parts[1:]]


def hotpot_record(raw: dict[str, Any]) -> dict[str, Any]:
    context, facts = [], []
    for ctx in raw["contexts"]:
        lines = sentences(ctx["paragraph_text"])
        context.append([ctx["title"], lines])
        if ctx.get("is_supporting"):
            facts.extend([ctx["title"], i] for i in range(len(lines)))
    spans = raw["answers_objects"][0]["spans"]
    return {
        "_id": raw["question_id"],
        "question": raw["question_text"],
        "answer": spans[0] if spans else "",
        "supporting_facts": facts,
        "context": context,
    }


def beir_set(records: list[dict[str, Any]], out: Path) -> tuple[int, int]:
    """Writes corpus, queries and qrels; returns (documents, queries)."""
    corpus: dict[str, dict[str, str]] = {}
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    queries, qrels = [], ["query-id\tcorpus-id\tscore"]
    for rec in records:
        gold = {title for title, _ in rec["supporting_facts"]}
        for title, lines in rec["context"]:
            corpus.setdefault(
                title, {"_id": doc_id(title), "title": title, "text": "".join(lines).strip()}
            )
        queries.append({"_id": rec["_id"], "text": rec["question"]})
        qrels.extend(f"{rec['_id']}\t{doc_id(title)}\t1" for title in sorted(gold))
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for doc in corpus.values():
            fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    (out / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    return len(corpus), len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="IRCoT's dev_subsampled.jsonl")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    lines = args.source.read_text(encoding="utf-8").splitlines()
    records = [hotpot_record(json.loads(line)) for line in lines[: args.questions]]
    args.out.mkdir(parents=True, exist_ok=True)
    n = len(records)
    hotpot = args.out / f"hotpot_dev_{n}.json"
    hotpot.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    docs, queries = beir_set(records, args.out / f"beir_hotpot_{n}")
    print(
        f"{hotpot}: {n} questions; {args.out / f'beir_hotpot_{n}'}: {docs} documents, "
        f"{queries} queries"
    )


if __name__ == "__main__":
    main()
