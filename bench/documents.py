"""Document reading benchmark: text quality and time per page, our readers beside the others.

The corpus is made in this run with known text (``local2_testkit.documents``): PDFs in one
and two columns, with a table, footnotes, ligature glyphs, Greek, Cyrillic and Chinese, a
scanned page, 500 plain pages; DOCX, PPTX, ODT, EPUB, HTML and Markdown. Page layouts
(``local2_testkit.pdf_layouts``): columns, a title across them, three columns, a table
across the page or inside a column, running heads, each drawn in reading order and out of
it, and ``--random`` pages of random layouts; and pages printed by chromium
(``local2_testkit.browser_pdfs``), a writer that places each glyph. Text quality is
the Levenshtein ratio of py-pdf/benchmarks (``rapidfuzz.fuzz.ratio`` / 100: 1 - indel
distance / total length) between the text read and the text written, both with whitespace
runs collapsed to one space (line wrapping is the layout's). Time is in-process, best of
``--repeat`` runs, per page; our reader is also timed through the bounded worker, as the
server reads. Hostile documents are read through the worker: time, and the worker's peak
resident memory above what it held before.

    .venv/bin/python bench/documents.py [--repeat 3] [--random 200]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from rapidfuzz import fuzz

from local2.bounded import WorkerPool
from local2.config._schema import DocumentsSettings
from local2.documents import Limits
from local2.documents._job import read_job
from local2.documents._ocr import PageOcr, ocr_installed
from local2.documents._pdf import page_text, read_pdf
from local2.documents._read import measure_reading
from local2_testkit import documents as corpus
from local2_testkit import hostile_documents as hostile
from local2_testkit import pdf_layouts as layouts
from local2_testkit.browser_pdfs import browser_samples
from local2_testkit.documents import Sample

Reader = Callable[[bytes], list[str]]


def words(text: str) -> str:
    return " ".join(text.split())


def quality(pages: list[str], sample: Sample) -> float:
    return fuzz.ratio(words(" ".join(pages)), words(sample.text)) / 100


# -- the PDF readers, each page's text as the library gives it -----------------------------------


def local2_pdf(data: bytes) -> list[str]:
    return [p.text for p in read_pdf(data, Limits(), ocr=None).pages]


def local2_drawing_order(data: bytes) -> list[str]:
    """local2's reader before reading order: PDFium's text as drawn, cleaned the same way."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    pdf = pdfium.PdfDocument(data)
    pages = [page_text(pdf[i].get_textpage().get_text_bounded()) for i in range(len(pdf))]
    pdf.close()
    return pages


def pypdfium2_raw(data: bytes) -> list[str]:
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    pdf = pdfium.PdfDocument(data)
    pages = [pdf[i].get_textpage().get_text_bounded() for i in range(len(pdf))]
    pdf.close()
    return pages


def pypdf_text(data: bytes) -> list[str]:
    import pypdf

    return [page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages]


def pdfminer_text(data: bytes) -> list[str]:
    from pdfminer.high_level import extract_text

    return extract_text(io.BytesIO(data)).split("\f")[:-1]


PDF_READERS: dict[str, Reader] = {
    "local2 (pypdfium2)": local2_pdf,
    "local2 as drawn (before)": local2_drawing_order,
    "pypdfium2 as is": pypdfium2_raw,
    "pypdf": pypdf_text,
    "pdfminer.six": pdfminer_text,
}


def timed(reader: Reader, data: bytes, repeat: int) -> tuple[list[str], float]:
    best = float("inf")
    pages: list[str] = []
    for _ in range(repeat):
        started = time.perf_counter()
        pages = reader(data)
        best = min(best, time.perf_counter() - started)
    return pages, best


def pdf_table(samples: list[Sample], repeat: int) -> list[str]:
    names = list(PDF_READERS)
    lines = [
        "| PDF (pages) | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    scores: dict[str, list[float]] = {n: [] for n in names}
    seconds: dict[str, float] = dict.fromkeys(names, 0.0)
    slowest: dict[str, float] = dict.fromkeys(names, 0.0)  # a document's ms per page
    pages = 0
    for sample in samples:
        row = []
        for name in names:
            text, took = timed(PDF_READERS[name], sample.data, repeat)
            score = quality(text, sample)
            row.append(f"{score:.3f}")
            if not sample.scanned:
                scores[name].append(score)
                seconds[name] += took
                slowest[name] = max(slowest[name], 1000 * took / len(sample.pages))
        pages += 0 if sample.scanned else len(sample.pages)
        lines.append(f"| {sample.name} ({len(sample.pages)}) | " + " | ".join(row) + " |")
    lines.append(
        "| **mean, text PDFs** | "
        + " | ".join(f"**{statistics.mean(scores[n]):.3f}**" for n in names)
        + " |"
    )
    lines.append(
        f"| ms per page, text PDFs ({pages} pages) | "
        + " | ".join(f"{1000 * seconds[n] / pages:.1f}" for n in names)
        + " |"
    )
    lines.append(
        "| ms per page, slowest PDF | " + " | ".join(f"{slowest[n]:.1f}" for n in names) + " |"
    )
    return lines


def random_table(count: int) -> list[str]:
    """Quality on pages of random layouts (``pdf_layouts.random_pdf``), split by whether the
    page was drawn in reading order: mean, lowest, and pages under 0.95, per reader."""
    names = list(PDF_READERS)
    scores: dict[bool, dict[str, list[float]]] = {True: {}, False: {}}
    for seed in range(count):
        sample, in_order = layouts.random_pdf(seed)
        for name in names:
            score = quality(PDF_READERS[name](sample.data), sample)
            scores[in_order].setdefault(name, []).append(score)
    lines = [
        f"| {count} random pages: mean / lowest / under 0.95 | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for in_order, label in ((True, "drawn in reading order"), (False, "drawn out of order")):
        got = scores[in_order]
        cells = [
            f"{statistics.mean(got[n]):.3f} / {min(got[n]):.3f} / {sum(x < 0.95 for x in got[n])}"
            for n in names
        ]
        lines.append(f"| {label} ({len(got[names[0]])}) | " + " | ".join(cells) + " |")
    return lines


def long_table(sample: Sample, repeat: int, cfg: DocumentsSettings) -> list[str]:
    n = len(sample.pages)
    lines = [
        f"| {n}-page PDF | quality | s | ms per page |",
        "|---|---:|---:|---:|",
    ]
    for name, reader in PDF_READERS.items():
        text, took = timed(reader, sample.data, repeat if name != "pdfminer.six" else 1)
        lines.append(
            f"| {name} | {quality(text, sample):.3f} | {took:.2f} | {1000 * took / n:.1f} |"
        )
    pool = WorkerPool("local2.documents._job", "document reading")
    try:
        measure_reading(corpus.one_column_pdf().data, cfg, name="warm.pdf", pool=pool)
        reading = measure_reading(sample.data, cfg, name=sample.name, pool=pool)
    finally:
        pool.close()
    document = reading.result()
    lines.append(
        f"| local2 through the worker (limit {cfg.timeout_s:g} s) | "
        f"{quality([p.text for p in document.pages], sample):.3f} | {reading.seconds:.2f} | "
        f"{1000 * reading.seconds / n:.1f} |"
    )
    return lines


def ocr_table(sample: Sample) -> list[str]:
    lines = ["| scanned page | quality of that page | s |", "|---|---:|---:|"]
    page = sample.scanned[0]
    truth = Sample(sample.name, b"", (sample.pages[page - 1],))
    for name in ("pypdf", "pdfminer.six"):
        text, took = timed(PDF_READERS[name], sample.data, 1)
        lines.append(f"| {name} | {quality([text[page - 1]], truth):.3f} | {took:.2f} |")
    if not ocr_installed():
        lines.append("| local2 with OCR | (the ocr extra is not installed) | |")
        return lines
    engine = PageOcr()
    for label in ("local2 with OCR (engine loading)", "local2 with OCR (engine loaded)"):
        started = time.perf_counter()
        document = read_pdf(sample.data, Limits(), ocr=engine)
        took = time.perf_counter() - started
        score = quality([document.pages[page - 1].text], truth)
        lines.append(f"| {label} | {score:.3f} | {took:.2f} |")
    return lines


def python_docx_text(data: bytes) -> list[str]:
    import docx

    document = docx.Document(io.BytesIO(data))
    out = [p.text for p in document.paragraphs]
    for table in document.tables:
        out += ["\t".join(c.text for c in row.cells) for row in table.rows]
    return ["\n".join(out)]


def office_table(samples: list[Sample], repeat: int) -> list[str]:
    lines = [
        "| document (pages) | local2 quality | pages right | ms per doc | python-docx quality |",
        "|---|---:|---:|---:|---:|",
    ]
    for sample in samples:
        header = {"format": sample.name.rsplit(".", 1)[1].replace("md", "text"), "limits": {}}

        def ours(data: bytes, header: dict[str, Any] = header) -> list[str]:
            reply = read_job(header, data)
            return [p[1] for p in reply["document"]["pages"]]

        text, took = timed(ours, sample.data, repeat)
        right = (
            sum(words(a) == words(b) for a, b in zip(text, sample.pages, strict=False))
            == len(sample.pages)
            == len(text)
        )
        baseline = ""
        if sample.name.endswith(".docx"):
            baseline = f"{quality(python_docx_text(sample.data), sample):.3f}"
        lines.append(
            f"| {sample.name} ({len(sample.pages)}) | {quality(text, sample):.3f} | "
            f"{'yes' if right else 'no'} | {1000 * took:.1f} | {baseline} |"
        )
    return lines


HOSTILE: dict[str, Callable[[], bytes]] = {
    "PDF stream inflating to 2 GiB": hostile.inflating_pdf,
    "100,000 pages": hostile.many_pages_pdf,
    "objects nested 100,000 deep": hostile.nested_pdf,
    "DOCX zip bomb (1 GiB)": hostile.docx_bomb,
    "DOCX member lying about its size": lambda: hostile.docx_bomb(1024, declared=1000),
    "EPUB zip bomb (1 GiB)": hostile.epub_bomb,
    "encrypted PDF": hostile.encrypted_pdf,
    "truncated PDF": lambda: hostile.truncated(corpus.one_column_pdf().data),
}


def hostile_table(cfg: DocumentsSettings) -> list[str]:
    lines = [
        "| hostile document | s | worker peak above its baseline, MB | outcome | next reads |",
        "|---|---:|---:|---|---|",
    ]
    normal = corpus.one_column_pdf().data
    pool = WorkerPool("local2.documents._job", "document reading")
    try:
        for label, make in HOSTILE.items():
            data = make()
            base = measure_reading(normal, cfg, name="n.pdf", pool=pool).rss_before_mb
            reading = measure_reading(data, cfg, name="x", pool=pool)
            after = measure_reading(normal, cfg, name="n.pdf", pool=pool)
            outcome = reading.error.reason if reading.error else "read"
            lines.append(
                f"| {label} | {reading.seconds:.2f} | {reading.rss_peak_mb - base:.0f} | "
                f"{outcome} | {'yes' if after.document else 'NO'} |"
            )
    finally:
        pool.close()
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--random", type=int, default=200, help="pages of random layouts")
    args = parser.parse_args(argv)
    cfg = DocumentsSettings()
    pdfs = corpus.pdf_samples() + layouts.layout_samples() + browser_samples()
    scanned = next(s for s in pdfs if s.scanned)
    sections = [
        pdf_table(pdfs, args.repeat),
        random_table(args.random),
        long_table(corpus.long_pdf(500), args.repeat, cfg),
        ocr_table(scanned),
        office_table(corpus.office_samples(), args.repeat),
        hostile_table(cfg),
    ]
    print("\n\n".join("\n".join(lines) for lines in sections))
    return 0


if __name__ == "__main__":
    sys.exit(main())
