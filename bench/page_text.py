"""Page-text benchmark: does the passage that answers the question reach the model?

Long pages are served from a real HTTP server on 127.0.0.1 and fetched by ``web_fetch``
(download, extraction worker, passage selection) with the question as the turn's query.
A fetch counts when the answer passage's needle (``page_text_pairs.py``) is in the text
the model is shown. Baseline, in the same run: today's cut, the first ``max_chars`` 3000
characters of the same extracted text (``truncate_paragraphs``), and the same cut at the
focused default's budget, so the table separates the gain of the bigger budget from the
gain of choosing passages.

    .venv/bin/python bench/page_text.py [--per-page]

Pages: the 14 articles of ``bench/extraction_corpus`` on one blog-archive page (LoCAL2's own
text), and the ten longest pages of the Python language reference that ship with the
interpreter (``pydoc_data.topics``), each in a documentation layout with site furniture.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from pydoc_data.topics import topics

from page_text_pairs import PAIRS

from local2.config._schema import WebFetchSettings
from local2.documents import truncate_paragraphs
from local2.tools._base import ToolContext
from local2.tools._passages import focus
from local2.tools._web_fetch import WebFetch
from local2_testkit.results import extracted_text
from local2_testkit.web_server import LocalServer, send

CORPUS = Path(__file__).parent / "extraction_corpus"
sys.path.insert(0, str(CORPUS))
from articles import ARTICLES  # noqa: E402
from build_corpus import blog_sidebar, docs_page  # noqa: E402

PYREF_TOPICS = [
    "specialnames",
    "compound",
    "types",
    "formatstrings",
    "string-methods",
    "typesseq",
    "debugger",
    "attribute-access",
    "typesmapping",
    "assignment",
]
_UNDERLINE = re.compile(r"^[*=\-^~]{3,}$")


def digest_page() -> str:
    """All corpus articles, in a fixed shuffled order, as one long blog-archive page."""
    names = sorted(ARTICLES)
    random.Random(5).shuffle(names)
    body: list[tuple[str, object]] = []
    for name in names:
        body.append(("h2", ARTICLES[name]["title"]))
        body.extend(ARTICLES[name]["body"])  # type: ignore[arg-type]
    return blog_sidebar({"title": "Weekend reading: the month's stories", "body": body})


def topic_blocks(text: str) -> list[tuple[str, object]]:
    """A reference topic's plain text as article blocks: headings, lists, code, paragraphs."""
    blocks: list[tuple[str, object]] = []
    for chunk in re.split(r"\n\s*\n", text.strip("\n")):
        lines = [ln for ln in chunk.split("\n") if ln.strip()]
        if not lines:
            continue
        if len(lines) == 2 and _UNDERLINE.match(lines[1].strip()):
            blocks.append(("h2", lines[0].strip()))
        elif lines[0].lstrip().startswith((">>>", "+--", "|")):
            blocks.append(("pre", "\n".join(ln.strip() for ln in lines)))
        elif lines[0].lstrip().startswith("* "):
            items = re.split(r"\n\s*\* ", "\n" + "\n".join(lines))
            blocks.append(("ul", [" ".join(i.split()) for i in items if i.strip()]))
        else:
            blocks.append(("p", " ".join(" ".join(lines).split())))
    return blocks


def pyref_page(topic: str) -> str:
    blocks = topic_blocks(topics[topic])
    title = str(blocks[0][1]) if blocks and blocks[0][0] == "h2" else topic
    return docs_page({"title": title, "body": blocks[1:] if blocks[0][0] == "h2" else blocks})


def pages() -> dict[str, str]:
    built = {"digest": digest_page()}
    built.update({f"pyref:{t}": pyref_page(t) for t in PYREF_TOPICS})
    return built


def squash(text: str) -> str:
    return " ".join(text.split())


Method = tuple[str, Callable[[str, str, str], str]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-page", action="store_true", help="also print hits per page")
    args = parser.parse_args(argv)
    built = pages()
    routes = {
        f"/{name.replace(':', '_')}.html": send(html.encode()) for name, html in built.items()
    }
    server = LocalServer(routes)
    url = {name: server.url(f"/{name.replace(':', '_')}.html") for name in built}
    cfg = {"allow_hosts": ["127.0.0.1"], "timeout_s": 30}
    whole = WebFetch(WebFetchSettings(**cfg, max_chars=10_000_000))
    default = WebFetch(WebFetchSettings(**cfg))  # num_ctx 32000: 12,000 characters
    small = WebFetch(WebFetchSettings(**cfg, max_chars=3000))
    try:
        full = {name: extracted_text(whole({"url": url[name]}).text) for name in built}

        def fetched(fetcher: WebFetch) -> Callable[[str, str, str], str]:
            def run(name: str, question: str, page_text: str) -> str:
                ctx = ToolContext("bench", "q", query=question)
                return extracted_text(fetcher({"url": url[name]}, ctx).text)

            return run

        budget = default.budget_chars
        methods: list[Method] = [
            ("top 3,000 chars (today) [baseline]", lambda n, q, t: truncate_paragraphs(t, 3000)),
            (f"top {budget:,} chars", lambda n, q, t: truncate_paragraphs(t, budget)),
            ("focused, 3,000-char budget", fetched(small)),
            (f"focused, {budget:,}-char budget (num_ctx 32000) [default]", fetched(default)),
        ]  # fmt: skip
        rows = []
        per_page: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for label, method in methods:
            hits = shown = 0
            started = time.perf_counter()
            for name, question, needle in PAIRS:
                text = method(name, question, full[name])
                hit = squash(needle) in squash(text)
                hits += hit
                shown += len(text)
                per_page[name][label].append(hit)
            elapsed = (time.perf_counter() - started) / len(PAIRS)
            rows.append((label, hits, shown / len(PAIRS), elapsed * 1000))
        extracted = sum(squash(n) in squash(full[p]) for p, _, n in PAIRS)
        focus_ms = _focus_cost(full, default.budget_chars)
    finally:
        server.close()

    lengths = {name: len(text) for name, text in full.items()}
    print(
        f"{len(PAIRS)} question/answer-passage pairs on {len(built)} pages; extracted page "
        f"text {min(lengths.values()):,}-{max(lengths.values()):,} characters "
        f"(median {sorted(lengths.values())[len(lengths) // 2]:,}). Answer passage in the "
        f"whole extracted text: {extracted}/{len(PAIRS)}."
    )
    n = len(PAIRS)
    print(
        "\n| what the model is shown | answer passage reaches the model | mean chars | ms/fetch |"
    )
    print("|---|---:|---:|---:|")
    for label, hits, mean_chars, ms in rows:
        print(f"| {label} | {hits}/{n} = {hits / n:.1%} | {mean_chars:,.0f} | {ms:.0f} |")
    base = rows[0][1]
    best = rows[-1][1]
    print(f"\nDefault / baseline: {best / max(base, 1):.2f}x the answers reaching the model.")
    print(f"Passage selection alone (split, BM25, choose) on a page: {focus_ms:.1f} ms mean.")
    if args.per_page:
        labels = [label for label, *_ in rows]
        print(
            "\n| page | chars | pairs | "
            + " | ".join(f"m{i + 1}" for i in range(len(labels)))
            + " |"
        )
        print("|---|---:|---:|" + "---:|" * len(labels))
        for name in built:
            cells = " | ".join(f"{sum(per_page[name][lb])}" for lb in labels)
            print(f"| {name} | {lengths[name]:,} | {len(per_page[name][labels[0]])} | {cells} |")
    return 0


def _focus_cost(full: dict[str, str], budget: int) -> float:
    started = time.perf_counter()
    for name, question, _ in PAIRS:
        focus(full[name], question, budget)
    return (time.perf_counter() - started) / len(PAIRS) * 1000


if __name__ == "__main__":
    sys.exit(main())
