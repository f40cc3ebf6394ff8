"""PDFs printed by Debian's chromium from HTML whose text is known: a second writer for the
layout corpus of ``bench/documents.py``.

reportlab places text a line at a time; chromium (Skia) places glyph runs and leaves the
spaces to the reader, so PDFium gives a rectangle per word or glyph. The pages: columns
set by CSS (drawn in reading order), a table across the page between two stretches of
columns, and two columns placed absolutely, the right one and then the title written
before the left one in the HTML (so drawn out of reading order). Empty when chromium is
not installed (``scripts/setup.sh --browser``).
"""

from __future__ import annotations

import html
import subprocess
import tempfile
from pathlib import Path

from local2_testkit.documents import Sample, paragraphs

CHROMIUM = Path("/usr/bin/chromium")
_STYLE = (
    "@page{size:A4;margin:2cm} body{font-family:serif;font-size:10pt;margin:0}"
    " p{margin:0 0 .5em 0} .c2{column-count:2;column-gap:1.5em;text-align:justify}"
    " .c3{column-count:3;column-gap:1.2em;font-size:9pt} td{padding:2px 6px}"
)


def print_pdf(body: str, timeout_s: float = 60) -> bytes:
    """``body`` (HTML) printed to a PDF by headless chromium."""
    with tempfile.TemporaryDirectory() as tmp:
        page, out = Path(tmp, "page.html"), Path(tmp, "page.pdf")
        page.write_text(
            f"<html><head><meta charset='utf-8'><style>{_STYLE}</style></head>"
            f"<body>{body}</body></html>"
        )
        subprocess.run(
            [
                str(CHROMIUM),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                f"--user-data-dir={tmp}/profile",
                "--no-pdf-header-footer",
                f"--print-to-pdf={out}",
                page.as_uri(),
            ],
            capture_output=True,
            timeout=timeout_s,
            check=True,
        )
        return out.read_bytes()


def _paragraphs(texts: list[str]) -> str:
    return "".join(f"<p>{html.escape(t)}</p>" for t in texts)


def _sample(name: str, body: str, texts: list[str]) -> Sample:
    return Sample(name, print_pdf(body), ("\n".join(texts),))


def browser_samples() -> list[Sample]:
    """The chromium-printed pages, or none when chromium is not installed."""
    if not CHROMIUM.exists():
        return []
    title, abstract, body = "A study of harbour bridges", paragraphs(302, 1)[0], paragraphs(303, 8)
    columns = f"<h1>{title}</h1><p><i>{abstract}</i></p><div class='c2'>{_paragraphs(body)}</div>"
    narrow = paragraphs(304, 12, per=3)
    upper, lower = paragraphs(305, 3), paragraphs(306, 3)
    rows = [["Year", "Town", "Repair", "Cost", "Engineer"]]
    rows += [[str(1990 + n), "Kelsby", "pier", str(100 * n + 50), "A. Keeper"] for n in range(8)]
    cells = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    across = (
        f"<div class='c2'>{_paragraphs(upper)}</div>"
        f"<table border=1 style='width:100%;border-collapse:collapse;margin:1em 0'>{cells}"
        f"</table><div class='c2'>{_paragraphs(lower)}</div>"
    )
    left, right, heading = paragraphs(320, 4), paragraphs(321, 4), "Notes from the council"
    place = "position:absolute;top:60px;width:48%;left:"
    placed = (
        f"<div style='{place}52%'>{_paragraphs(right)}</div>"
        f"<h1 style='position:absolute;top:0;left:0'>{heading}</h1>"
        f"<div style='{place}0'>{_paragraphs(left)}</div>"
    )
    return [
        _sample("browser-title-columns.pdf", columns, [title, abstract, *body]),
        _sample(
            "browser-three-columns.pdf", f"<div class='c3'>{_paragraphs(narrow)}</div>", narrow
        ),
        _sample("browser-table-across.pdf", across, [*upper, *(" ".join(r) for r in rows), *lower]),
        _sample("browser-placed-right-first.pdf", placed, [heading, *left, *right]),
    ]
