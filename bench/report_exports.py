"""What the report's HTML, PDF and DOCX exports cost (issue 56), beside a baseline in the
same run.

- **Import**, each in a fresh interpreter (median of ``--reps``): ``local2.references``, what
  the service imports when it starts (the baseline), then the writers it leaves for the
  first PDF or DOCX asked for: ``reportlab.platypus`` and ``docx``. It also checks that the
  baseline import brings in neither writer (the reason they are imported lazily).
- **Export**, warm (median of ``--reps``): the three reference formats the Research tab
  already wrote for every report shown (BibTeX, RIS, CSL-JSON: the baseline), then each
  report format, on a report the research graph writes (``report_markdown``) with
  ``--paragraphs`` paragraphs citing eight sources.

    .venv/bin/python bench/report_exports.py --reps 7 --paragraphs 40

The PDF writer was chosen on this measure: fpdf2 2.8.9, installed for the comparison only,
took 1.2-2.1 s to import (fontTools' variable-font modules bring numpy) against 0.17-0.22 s
for ``reportlab.platypus`` in the same minutes, and installs 31 MB with fontTools against
ReportLab's 9 MB, which ships its own font (Vera).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.tools.test_references_export import sources  # noqa: E402

from local2.contracts import CitedSource  # noqa: E402
from local2.references import to_bibtex, to_csl_json, to_docx, to_html, to_pdf, to_ris  # noqa: E402
from local2.research._state import Source  # noqa: E402
from local2.research._verify import Verified, report_markdown  # noqa: E402

IMPORTS = {
    "local2.references (baseline: what the service imports)": "import local2.references",
    "+ reportlab.platypus (first PDF)": "import local2.references, reportlab.platypus",
    "+ docx (first DOCX)": "import local2.references, docx",
}
LEAK_CHECK = (
    "import sys, local2.service.research._exports; "
    "print(sorted(m for m in ('reportlab', 'docx', 'fpdf') if m in sys.modules))"
)


def fresh(code: str) -> float:
    """Seconds a fresh interpreter takes to run ``code``, less its own start (``pass``)."""

    def once(text: str) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", text], check=True, cwd=ROOT)
        return time.perf_counter() - started

    return once(code) - once("pass")


def warm(work: Callable[[], object], reps: int) -> float:
    took = []
    for _ in range(reps):
        started = time.perf_counter()
        work()
        took.append(time.perf_counter() - started)
    return statistics.median(took)


def report_and_sources(paragraphs: int) -> tuple[str, list[CitedSource]]:
    cited = [*sources(), *[{**s, "n": s["n"] + 4} for s in sources()]]  # eight
    ledger = [
        Source(
            n=s["n"],
            url=s["url"],
            title=s["title"],
            text="",
            kind=s["kind"],
            found_at=0.0,
            read_at=s["read_at"],
            step="s1",
            page=s["page"],
            **({"meta": s["meta"]} if "meta" in s else {}),  # type: ignore[typeddict-item]
        )
        for s in cited
    ]
    body = "\n\n".join(
        f"Finding {i} holds for long clinical notes [{1 + i % 8}], as a second study says "
        f"[{1 + (i + 3) % 8}]. " * 3
        for i in range(paragraphs)
    )
    verified = Verified(body, [], list(range(1, 9)), paragraphs * 6, [])
    report = report_markdown("Does sparse attention scale?", verified, ledger)
    return report, cited  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--paragraphs", type=int, default=40)
    args = parser.parse_args()

    leaked = subprocess.run(
        [sys.executable, "-c", LEAK_CHECK], check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    print(f"writers imported with the service's exports module: {leaked}")
    print("\n| import, fresh interpreter | median ms | x baseline |\n| --- | --- | --- |")
    medians = {
        name: statistics.median(fresh(code) for _ in range(args.reps))
        for name, code in IMPORTS.items()
    }
    base = next(iter(medians.values()))
    for name, took in medians.items():
        print(f"| {name} | {took * 1000:.0f} | {took / base:.2f} |")

    report, cited = report_and_sources(args.paragraphs)
    to_pdf(report, cited), to_docx(report, cited)  # the writers imported, fonts registered
    baseline = warm(lambda: (to_bibtex(cited), to_ris(cited), to_csl_json(cited)), args.reps)
    print(f"\n| export, {args.paragraphs} paragraphs, warm | median ms | x baseline |")
    print("| --- | --- | --- |")
    print(f"| BibTeX + RIS + CSL-JSON (baseline) | {baseline * 1000:.1f} | 1.00 |")
    for name, work in (
        ("HTML", lambda: to_html(report, cited)),
        ("PDF", lambda: to_pdf(report, cited)),
        ("DOCX", lambda: to_docx(report, cited)),
    ):
        took = warm(work, args.reps)
        print(f"| {name} | {took * 1000:.1f} | {took / baseline:.1f} |")
    pdf = to_pdf(report, cited)
    print(
        f"\nPDF size: {len(pdf) / 1024:.0f} KiB; DOCX: {len(to_docx(report, cited)) / 1024:.0f} KiB"
    )


if __name__ == "__main__":
    main()
