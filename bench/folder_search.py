"""Searching a folder of notes: vectors only, BM25 only and the two fused (``search_files``),
on held-out multi-hop questions, all in the same run over the same index.

The set is in HotpotQA's JSON format (each question with its 10 paragraphs and the titles
that support its answer): by default the public HotpotQA dev sample the "embed" bench
builds (``bench/public/data/hotpot_dev_100.json``, real Wikipedia paragraphs; give its path
with ``--set``), else the generated ``bench/multihop/multihop.json``. Every paragraph
becomes a Markdown file named by its article's title (``# Title`` then the text), in one
folder, indexed by ``FileIndex`` with the offline MiniLM embedder (as a person without
Ollama gets it), or ``--embedder lexical``. Then, for each question:

- **vectors**: Chroma's nearest chunks (what ``search_files`` did before hybrid search);
- **bm25**: the index's BM25 side alone;
- **hybrid**: the two fused by reciprocal rank (``k`` = 60), no links followed;
- **hybrid + links** (``FileIndex.search``, what ``search_files`` runs): the two fused, then
  the files the two best hits name by title fused in as a third ranking.

Reported per ranking: recall@5 (the share of gold articles among the top 5 hits' files),
the share of questions with all their gold in the top 5, and the median and p95 query time
in ms, the query's embedding left out (it is the embedder's, measured on its own and
reported beside: each question is embedded once first, and every ranking is given that
vector); hybrid's time is both sides, the fusion, the links and the best passage of each
hit. ``--limit`` takes the first N questions (and only their paragraphs), ``--slice A:B``
questions A to B (``hotpot_dev_500.json --slice 101:300``: held out from the 100 above);
``--keep DIR`` keeps the folder and its index there, so a second run does not embed again.
``--names number`` names each note by its number (``0001.md``) instead of its title, so
that no note's name is a word another note says (issue 55: the link ranking then finds
nothing, and what is measured is the index alone); the note still starts ``# Title``.
The 2WikiMultiHopQA set: ``--set bench/public/data/twowiki_dev_100-199.json``
(``bench/public/build.py --twowiki``).

    .venv/bin/python bench/folder_search.py --set bench/public/data/hotpot_dev_100.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from local2.config import load_settings
from local2.files import FileIndex

HERE = Path(__file__).resolve().parent
PUBLIC = HERE / "public" / "data" / "hotpot_dev_100.json"
GENERATED = HERE / "multihop" / "multihop.json"
TOP = 5


def file_name(title: str) -> str:
    return re.sub(r"[^\w.,()' -]+", "_", title).strip(" .")[:120] + ".md"


NAMES: dict[str, str] = {}  # with --names number: an article's title -> its file's name


def note_name(title: str) -> str:
    """An article's file: named by its title, or (``--names number``) by its number."""
    return NAMES.get(title) or file_name(title)


def write_folder(records: list[dict[str, Any]], folder: Path, numbered: bool = False) -> int:
    """One Markdown file per article (named by its title, or ``numbered``: ``0001.md``, so
    that no note's name is a word another note says); the number of files."""
    folder.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for record in records:
        for title, sentences in record["context"]:
            if numbered:
                NAMES.setdefault(title, f"{len(NAMES) + 1:04d}.md")
            name = note_name(title)
            if name in seen:
                continue
            seen.add(name)
            text = "".join(sentences) if isinstance(sentences, list) else str(sentences)
            path = folder / name
            if not path.exists():
                path.write_text(f"# {title}\n\n{text.strip()}\n", encoding="utf-8")
    return len(seen)


class Embedded:
    """The index's embedder with each question's vector computed once, beforehand (timed)."""

    def __init__(self, embedder: Any, questions: list[str]) -> None:
        self.inner, self.name, self.scheme = embedder, embedder.name, embedder.scheme
        self.vectors: dict[str, list[float]] = {}
        times = []
        for q in questions:
            started = time.perf_counter()
            self.vectors[q] = embedder.embed_query(q)
            times.append((time.perf_counter() - started) * 1000)
        self.median_ms = statistics.median(times)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return list(self.inner.embed_documents(texts))

    def embed_query(self, text: str) -> list[float]:
        return self.vectors.get(text) or list(self.inner.embed_query(text))


def vectors_only(index: FileIndex, query: str) -> list[str]:
    result = index.collection.query(
        query_embeddings=[index.embedder.embed_query(query)],
        n_results=min(index.count(), TOP * 3),
        include=["metadatas"],
    )
    return [str(m["rel"]) for m in (result["metadatas"] or [[]])[0]]


def bm25_only(index: FileIndex, query: str) -> list[str]:
    return [index.lexical.rows[cid].rel for cid, _ in index.lexical.search(query, 15)]


def hybrid(index: FileIndex, query: str, links: bool) -> list[str]:
    """``FileIndex.search``, with the best hits' links followed or not (``files.link_notes``,
    off by default)."""
    index.link_notes = links
    return [Path(h.path).name for h in index.search(query, TOP)]


def measure(records: list[dict[str, Any]], rank: Callable[[str], list[str]]) -> dict[str, float]:
    recalls, complete, times = [], 0, []
    for record in records:
        gold = {note_name(title) for title, _ in record["supporting_facts"]}
        started = time.perf_counter()
        found = rank(record["question"])
        times.append((time.perf_counter() - started) * 1000)
        top = list(dict.fromkeys(Path(f).name for f in found))[:TOP]
        hit = len(gold & set(top))
        recalls.append(hit / len(gold))
        complete += hit == len(gold)
    times.sort()
    return {
        "recall@5": statistics.mean(recalls),
        "all gold in top 5": complete / len(records),
        "median ms": statistics.median(times),
        "p95 ms": times[int(0.95 * (len(times) - 1))],
    }


def run(args: argparse.Namespace) -> None:
    path = Path(args.set) if args.set else (PUBLIC if PUBLIC.exists() else GENERATED)
    records = json.loads(path.read_text(encoding="utf-8"))
    if args.slice:  # questions A to B (from 1, both included), as evidence_recall.py --slice
        first, _, last = args.slice.partition(":")
        if not 1 <= int(first) <= int(last) <= len(records):
            raise SystemExit(f"--slice {args.slice}: the set has questions 1 to {len(records)}")
        records = records[int(first) - 1 : int(last)]
    records = records[: args.limit or None]
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="folder-search-"))
    files = write_folder(records, base / "notes", numbered=args.names == "number")
    settings = load_settings(
        overrides={
            "system": {"data_dir": str(base / "data")},
            "files": {"roots": [str(base / "notes")], "embedder": args.embedder},
            "memory": {"embedder": args.embedder},
        }
    )
    index = FileIndex(settings)
    started = time.perf_counter()
    report = index.sync()
    built = time.perf_counter() - started
    index.search("warm up", TOP)  # the BM25 side is read, the model is loaded
    embedded = Embedded(index.embedder, [r["question"] for r in records])
    index.embedder = embedded  # type: ignore[assignment]  # the same protocol
    rows = [
        ("vectors only (before)", measure(records, lambda q: vectors_only(index, q))),
        ("BM25 only", measure(records, lambda q: bm25_only(index, q))),
        ("hybrid (RRF k=60)", measure(records, lambda q: hybrid(index, q, False))),
        (
            "hybrid + links (search_files; files.link_notes)",
            measure(records, lambda q: hybrid(index, q, True)),
        ),
    ]
    print(
        f"{path.name}: {len(records)} questions, {files} files named by {args.names}, "
        f"{report.chunks} chunks; "
        f"embedder {index.embedder.name}; index built in {built:.1f} s "
        f"({report.added} added, {report.unchanged} unchanged); embedding a query: "
        f"{embedded.median_ms:.1f} ms median (left out of the times below)\n"
    )
    print("| search | recall@5 | all gold in top 5 | query median ms | p95 ms |")
    print("|---|---:|---:|---:|---:|")
    base_recall = rows[0][1]["recall@5"] or 1.0
    for label, m in rows:
        print(
            f"| {label} | {m['recall@5']:.2f} ({m['recall@5'] / base_recall:.2f}x) | "
            f"{m['all gold in top 5']:.2f} | {m['median ms']:.1f} | {m['p95 ms']:.1f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", help="a HotpotQA-format JSON file (default: see above)")
    parser.add_argument("--slice", help="questions A:B of the set (from 1, both included)")
    parser.add_argument("--limit", type=int, default=0, help="the first N questions only")
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "lexical"])
    parser.add_argument("--keep", help="keep the folder and its index in this directory")
    parser.add_argument(
        "--names",
        default="title",
        choices=["title", "number"],
        help="name each note by its article's title (a name another note may say) or number",
    )
    run(parser.parse_args())


if __name__ == "__main__":
    main()
