"""Indexing a folder of documents: a first build, a re-index with nothing changed, and one
with a few documents changed, against the same texts as Markdown files in the same run.

The folder is made in this run: ``--documents`` files (by default 500), most of them PDFs of
2-4 pages, the rest DOCX and PPTX (``local2_testkit.documents``), each with its own words.
The baseline is the same text written as ``.md`` files, indexed the same way (no document
worker): the ratio says what reading documents adds to a build. Both use the lexical
embedder (no model, so the figures are the reading and the bookkeeping, not the embedding).
Reported: seconds per file for the first build, the re-index with nothing changed and with
``--changed`` documents rewritten, and how many documents the worker read each time.

    .venv/bin/python bench/folder_index.py [--documents 500] [--changed 5]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from local2.config import DocumentsSettings, load_settings
from local2.documents import Document, read_document
from local2.files import Folders
from local2_testkit import documents as corpus


class Counting:
    def __init__(self) -> None:
        self.reads = 0

    def __call__(
        self, data: bytes, cfg: DocumentsSettings, *, name: str, deadline: float | None = None
    ) -> Document:
        self.reads += 1
        return read_document(data, cfg, name=name, deadline=deadline)


def make_folder(root: Path, count: int, seed: int) -> dict[Path, list[str]]:
    """``count`` documents under ``root`` and the text of each one's pages."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    made: dict[Path, list[str]] = {}
    for n in range(count):
        pages = [" ".join(corpus.sentences(seed * 10_000 + n * 10 + p, 4)) for p in range(4)]
        pages = pages[: rng.randint(2, 4)]
        kind = rng.random()
        if kind < 0.7:
            path = root / f"doc-{n:04d}.pdf"
            path.write_bytes(corpus.pdf_of([[p] for p in pages]))
        elif kind < 0.9:
            path = root / f"doc-{n:04d}.docx"
            path.write_bytes(corpus.docx_of([[p] for p in pages]))
        else:
            path = root / f"doc-{n:04d}.pptx"
            path.write_bytes(corpus.pptx_of([(f"Slide {i + 1}", p) for i, p in enumerate(pages)]))
        made[path] = pages
    return made


def timed_sync(folders: Folders) -> tuple[float, int]:
    seen: list[int] = []
    started = time.perf_counter()
    report = folders.index.sync(progress=lambda done, total, _name: seen.append(total))
    assert seen and seen[-1] == report.files, "progress reported every file"
    return time.perf_counter() - started, report.files


def run(count: int, changed: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        made = make_folder(base / "docs", count, seed=7)
        texts = base / "texts"
        texts.mkdir()
        for path, pages in made.items():
            (texts / f"{path.stem}.md").write_text("\n\n\f".join(pages))
        rows = []
        for label, folder in (("documents", base / "docs"), ("markdown (baseline)", texts)):
            settings = load_settings(
                overrides={
                    "system": {"data_dir": str(base / f"data-{folder.name}")},
                    "files": {"roots": [str(folder)], "embedder": "lexical"},
                    "memory": {"embedder": "lexical"},
                }
            )
            reader = Counting()
            folders = Folders(settings, reader=reader)
            first, files = timed_sync(folders)
            first_reads = reader.reads
            again, _ = timed_sync(folders)
            again_reads = reader.reads - first_reads
            targets = sorted(folder.iterdir())[:changed]
            for path in targets:
                extra = " The harbour bell was recast in 2024."
                if path.suffix == ".md":
                    path.write_text(path.read_text() + extra)
                else:
                    pages = made[path]
                    pages = [*pages[:-1], pages[-1] + extra]
                    data = (
                        corpus.pdf_of([[p] for p in pages])
                        if path.suffix == ".pdf"
                        else corpus.docx_of([[p] for p in pages])
                        if path.suffix == ".docx"
                        else corpus.pptx_of([(f"Slide {i + 1}", p) for i, p in enumerate(pages)])
                    )
                    path.write_bytes(data)
            some, _ = timed_sync(folders)
            some_reads = reader.reads - first_reads - again_reads
            rows.append((label, files, first, first_reads, again, again_reads, some, some_reads))
        print(f"{count} files, {changed} changed; lexical embedder; seconds (ms per file)\n")
        print("| folder | first build | reads | nothing changed | reads | some changed | reads |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, files, first, r1, again, r2, some, r3 in rows:
            cells = " | ".join(
                f"{seconds:.1f} ({1000 * seconds / files:.1f}) | {reads}"
                for seconds, reads in ((first, r1), (again, r2), (some, r3))
            )
            print(f"| {label} | {cells} |")
        docs, text = rows
        print(f"\nfirst build, documents / markdown: {docs[2] / text[2]:.2f}x")
        print(f"re-index with nothing changed, documents / markdown: {docs[4] / text[4]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=500)
    parser.add_argument("--changed", type=int, default=5)
    args = parser.parse_args()
    run(args.documents, args.changed)


if __name__ == "__main__":
    main()
