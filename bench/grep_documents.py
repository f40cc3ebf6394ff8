"""grep_files over a folder of documents: their lines from the index (indexed, nothing read
lately) against reading every document in the worker, and the same texts as Markdown files
(no document at all) as the baseline, in the same run.

The folder is :func:`folder_index.make_folder`'s (``--documents`` files, by default 200:
70 % PDFs of 2-4 pages, 20 % DOCX, 10 % PPTX), its texts also written as ``.md`` files.
Each grep runs in a new :class:`Folders` (nothing read lately, as in a new process), with
the grep's budget raised so the reading one finishes; the pattern matches a line in about
one document in four. Reported: seconds, documents the worker read, and whether the lines
found from the index are the lines found by reading.

    .venv/bin/python bench/grep_documents.py [--documents 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from folder_index import Counting, make_folder

import local2.tools._file_grep as file_grep
from local2.config import Settings, load_settings
from local2.files import Folders
from local2.tools._base import ToolContext
from local2.tools._files import file_tools

PATTERN = r"harbour \w+ bell"
CTX = ToolContext(session_id="bench", query_id="bench")


def settings_for(folder: Path, data: Path) -> Settings:
    return load_settings(
        overrides={
            "system": {"data_dir": str(data)},
            "files": {"roots": [str(folder)], "embedder": "lexical", "list_limit": 10_000},
            "memory": {"embedder": "lexical"},
        }
    )


def timed_grep(settings: Settings) -> tuple[float, int, str]:
    """One grep in a new Folders: seconds, documents read, its text."""
    reader = Counting()
    folders = Folders(settings, reader=reader)
    grep = {t.name: t for t in file_tools(settings, folders=folders)}["grep_files"]
    folders.index  # opened before the clock starts, as every file tool call does  # noqa: B018
    started = time.perf_counter()
    out = grep.run({"pattern": PATTERN}, CTX)
    return time.perf_counter() - started, reader.reads, str(out)


def body(text: str) -> list[str]:
    """The matching lines, without the header and the note."""
    return [line for line in text.splitlines()[2:] if not line.startswith("(")]


def run(count: int, repeat: int) -> None:
    file_grep.GREP_BUDGET_S = 600.0  # the reading one must finish to be measured
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        made = make_folder(base / "docs", count, seed=7)
        texts = base / "texts"
        texts.mkdir()
        for path, pages in made.items():
            (texts / f"{path.stem}.md").write_text("\n\n".join(pages))
        unindexed = settings_for(base / "docs", base / "data-unindexed")
        indexed = settings_for(base / "docs", base / "data-indexed")
        markdown = settings_for(texts, base / "data-markdown")
        Folders(indexed).index.sync()
        rows: dict[str, list[tuple[float, int, str]]] = {"read": [], "index": [], "md": []}
        for _ in range(repeat):
            rows["read"].append(timed_grep(unindexed))
            rows["index"].append(timed_grep(indexed))
            rows["md"].append(timed_grep(markdown))
        best = {name: min(runs, key=lambda r: r[0]) for name, runs in rows.items()}
        same = body(best["read"][2]) == body(best["index"][2])
        found = len(body(best["index"][2]))
        print(f"{count} documents, pattern {PATTERN!r}: {found} matching lines; best of {repeat}\n")
        print("| grep over | seconds | ms per file | documents read |")
        print("|---|---:|---:|---:|")
        labels = {
            "read": "documents, not indexed (read in the worker)",
            "index": "documents, indexed (lines from the index)",
            "md": "the same texts as Markdown (baseline)",
        }
        for name, label in labels.items():
            seconds, reads, _ = best[name]
            print(f"| {label} | {seconds:.2f} | {1000 * seconds / count:.1f} | {reads} |")
        print(f"\nindexed / markdown: {best['index'][0] / best['md'][0]:.2f}x")
        print(f"read / indexed: {best['read'][0] / best['index'][0]:.2f}x")
        print(f"lines from the index are the lines read: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    run(args.documents, args.repeat)


if __name__ == "__main__":
    main()
