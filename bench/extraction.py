"""Main-text extraction benchmark: web_fetch's extractor against plain BeautifulSoup.

Scores each extractor on ``bench/extraction_corpus`` (pages + gold main text) by F1 over
4-word shingles (multisets of lower-cased word 4-grams), reports mean precision, recall,
F1 and pages per second, and prints a markdown table.

    .venv/bin/python bench/extraction.py [--repeat 5]

Published reference on the public article-extraction benchmark (181 pages):
BeautifulSoup ``get_text`` F1 0.665, trafilatura F1 0.958.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bs4 import BeautifulSoup

from local2.documents._extract import decode_body, extract_main_text, soup_text

CORPUS = Path(__file__).parent / "extraction_corpus"
SHINGLE = 4


def shingles(text: str, n: int = SHINGLE) -> Counter[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return Counter(tuple(words[i : i + n]) for i in range(max(len(words) - n + 1, 0)))


def prf(predicted: str, gold: str) -> tuple[float, float, float]:
    pred, ref = shingles(predicted), shingles(gold)
    overlap = sum((pred & ref).values())
    p = overlap / sum(pred.values()) if pred else 0.0
    r = overlap / sum(ref.values()) if ref else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def plain_bs4(html: str) -> str:
    """The baseline: BeautifulSoup ``get_text`` with only script and style removed."""
    soup = BeautifulSoup(html, "lxml")
    for tag in soup(["script", "style"]):
        tag.decompose()
    return soup.get_text("\n", strip=True)


EXTRACTORS: dict[str, Callable[[str], str]] = {
    "web_fetch extractor (trafilatura, favor_precision) [default]": lambda h: extract_main_text(
        h, favor="precision"
    ),
    "trafilatura balanced": lambda h: extract_main_text(h, favor="balanced"),
    "trafilatura favor_recall": lambda h: extract_main_text(h, favor="recall"),
    "BeautifulSoup get_text, nav/header/footer/aside removed (fallback)": soup_text,
    "BeautifulSoup get_text, script/style removed": plain_bs4,
}


def load_corpus() -> list[tuple[str, str, str]]:
    pages = []
    for page in sorted((CORPUS / "pages").glob("*.html")):
        gold = (CORPUS / "gold" / f"{page.stem}.txt").read_text(encoding="utf-8")
        pages.append((page.stem, decode_body(page.read_bytes(), None, True), gold))
    return pages


def run(repeat: int) -> list[tuple[str, float, float, float, float]]:
    corpus = load_corpus()
    rows = []
    for name, fn in EXTRACTORS.items():
        scores = [prf(fn(html), gold) for _, html, gold in corpus]
        start = time.perf_counter()
        for _ in range(repeat):
            for _, html, _ in corpus:
                fn(html)
        pages_s = repeat * len(corpus) / (time.perf_counter() - start)
        n = len(scores)
        p, r, f = (sum(s[i] for s in scores) / n for i in range(3))
        rows.append((name, f, p, r, pages_s))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing passes over the corpus")
    parser.add_argument("--per-page", action="store_true", help="also print F1 per page")
    args = parser.parse_args(argv)
    rows = run(args.repeat)
    n = len(load_corpus())
    print(f"Corpus: {n} pages in {CORPUS}")
    print("| extractor | F1 | precision | recall | pages/s |")
    print("|---|---|---|---|---|")
    for name, f, p, r, speed in rows:
        print(f"| {name} | {f:.3f} | {p:.3f} | {r:.3f} | {speed:.0f} |")
    print(
        "\nPublished reference (public article-extraction benchmark, 181 pages): "
        "BeautifulSoup get_text F1 0.665, trafilatura F1 0.958."
    )
    if args.per_page:
        print("\n| page | " + " | ".join(f"F1 {i + 1}" for i in range(len(EXTRACTORS))) + " |")
        print("|---|" + "---|" * len(EXTRACTORS))
        for stem, html, gold in load_corpus():
            cells = " | ".join(f"{prf(fn(html), gold)[2]:.3f}" for fn in EXTRACTORS.values())
            print(f"| {stem} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
