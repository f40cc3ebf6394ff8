"""Page text made in a bounded worker process (:mod:`local2.bounded`), for ``web_fetch``.

The downloaded bytes go to a worker (``python -m local2.tools._extract_worker``) that
decodes, extracts, cleans and picks the passages to show, and sends back only that text.
Besides the worker's memory and CPU limits, a timer moves a slow trafilatura run to the
linear fallback. Starting a worker imports trafilatura (~0.75 s), so one is started when a
fetch begins and its start overlaps the download.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping
from typing import Any, TypedDict

from local2.bounded import Limiter, OverBudget, pool_for, serve
from local2.documents import (
    MAX_ELEMENTS,
    clean_text,
    decode_body,
    extract_page,
    fast_text,
    published_date,
)
from local2.retrieval import bm25_scores
from local2.tools._passages import focus

EMPTY_TEXT = "(no readable text found on this page)"


class PageReply(TypedDict):
    """What the worker sends back of one page: the text the model reads, the whole text (for
    the library), how much of it was shown, and how it was extracted."""

    ok: bool
    full_text: str | None
    text: str
    chars: int
    chars_shown: int
    passages_shown: int
    passages_total: int
    method: str
    recycle: bool  # trafilatura was interrupted mid-way: the worker is not reused
    published: str | None  # the date the page's own metadata says it was published


def page_job(header: Mapping[str, Any], body: bytes, limit: Limiter | None = None) -> PageReply:
    """Decode, extract, clean and focus one page: the reply the worker sends back.

    ``limit(seconds)`` bounds the trafilatura run (the worker's timer raising
    :class:`OverBudget`); in-process callers (benchmarks) pass nothing.
    """
    kind = header.get("kind", "html")
    decoded = decode_body(body, header.get("charset"), kind == "html")
    method = "text"
    published = published_date(decoded) if kind == "html" else None
    if kind == "html":
        guard = limit(float(header["extract_s"])) if limit and header.get("extract_s") else None
        try:
            with guard or contextlib.nullcontext():
                raw, method = extract_page(
                    decoded,
                    header.get("url"),
                    header.get("favor", "precision"),
                    int(header.get("max_elements", MAX_ELEMENTS)),
                )
        except OverBudget:
            raw, method = fast_text(decoded), "fast: extraction over its time budget"
    else:
        raw = decoded
    text = clean_text(raw).strip()
    shown = focus(text, str(header.get("question", "")), int(header["budget_chars"]))
    return {
        "ok": True,
        "full_text": text if header.get("keep_text") else None,  # for the library
        "text": shown.text or EMPTY_TEXT,
        "chars": shown.chars_total,
        "chars_shown": shown.chars_shown,
        "passages_shown": shown.passages_shown,
        "passages_total": shown.passages_total,
        "method": method,
        "recycle": method.endswith("time budget"),
        "published": published,
    }


def _warm() -> None:
    # In the worker, paid once before the first page: trafilatura is about 0.3 s of imports
    # (python -X importtime), which the server, importing this module for POOL, does not pay.
    import trafilatura  # noqa: F401

    bm25_scores([["warm"]], ["warm"], k1=1.2, b=0.75)  # BM25's imports (numpy), paid once too


POOL = pool_for("local2.tools._extract_worker", "page extraction")


if __name__ == "__main__":
    serve(page_job, int(sys.argv[1]) if len(sys.argv) > 1 else 768, "the page", _warm)
