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

- with ``--twowiki 2wikimultihopqa_dev_200.jsonl`` (FlashRAG's repack of the first 200
  2WikiMultiHopQA dev records, issue 55): ``twowiki_dev_100-199.json`` in the same HotpotQA
  format, with each record's ``type`` (compositional, inference, comparison,
  bridge_comparison) and its own supporting sentences, and ``beir_twowiki_100/``. Only
  records 100-199 are read: records 0-99 are held out for checking from outside, and are
  skipped unparsed.

    .venv/bin/python bench/public/build.py --source dev_subsampled.jsonl [--questions 100]
    .venv/bin/python bench/public/build.py --twowiki 2wikimultihopqa_dev_200.jsonl
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


TWOWIKI_FIRST = 100  # records 0-99 of the 2Wiki file are held out: never parsed


def twowiki_records(path: Path) -> list[dict[str, Any]]:
    """2WikiMultiHopQA records 100-199 of FlashRAG's file in HotpotQA's format: each
    paragraph's sentences joined as HotpotQA's are (each after the first with a leading
    space), the record's own supporting sentences, its ``type``, and the first golden answer
    the paragraphs write as given ("Alain Poiré", not "Alain Poire"). A title seen before
    with other text (the same article tokenised twice) keeps its first text, when it has as
    many sentences (so the supporting sentence numbers still hold): one page per title."""
    records = []
    first: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as lines:
        for i, line in enumerate(lines):
            if i < TWOWIKI_FIRST:
                continue  # held out: not parsed, not looked at
            if i >= TWOWIKI_FIRST + 100:
                break
            raw = json.loads(line)
            meta = raw["metadata"]
            titles, contents = meta["context"]["title"], meta["context"]["content"]
            context = [
                [t, [s.strip() if n == 0 else " " + s.strip() for n, s in enumerate(c)]]
                for t, c in zip(titles, contents, strict=True)
            ]
            for pair in context:
                known = first.setdefault(pair[0], pair[1])
                pair[1] = known if len(known) == len(pair[1]) else pair[1]
            facts = meta["supporting_facts"]
            text = " ".join(" ".join(c) for c in contents)
            answers = raw["golden_answers"]
            answer = next(
                (a for a in answers if re.search(rf"\b{re.escape(a)}\b", text)), answers[0]
            )
            records.append(
                {
                    "_id": raw["id"],
                    "question": raw["question"],
                    "answer": answer,
                    "type": meta["type"],
                    "supporting_facts": [
                        [t, int(n)] for t, n in zip(facts["title"], facts["sent_id"], strict=True)
                    ],
                    "context": context,
                }
            )
    return records


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
    parser.add_argument("--source", type=Path, help="IRCoT's dev_subsampled.jsonl")
    parser.add_argument("--twowiki", type=Path, help="2wikimultihopqa_dev_200.jsonl (FlashRAG)")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.twowiki is not None:
        records = twowiki_records(args.twowiki)
        args.out.mkdir(parents=True, exist_ok=True)
        out = args.out / "twowiki_dev_100-199.json"
        out.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
        docs, queries = beir_set(records, args.out / "beir_twowiki_100")
        print(f"{out}: {len(records)} questions; beir_twowiki_100: {docs} documents")
    if args.source is None:
        return
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
