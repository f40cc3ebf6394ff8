"""Text out of web content: main-text extraction, decoding, cleaning and truncation.

trafilatura finds the article and drops navigation, cookie banners, comments and related
links (F1 0.958 on the public article-extraction benchmark, against 0.665 for plain
BeautifulSoup ``get_text``); BeautifulSoup is the fallback for pages it returns nothing for
(very short pages, app shells). ``bench/extraction.py`` measures both on our corpus.
"""

from __future__ import annotations

import codecs
import logging
import re
from typing import Literal

import charset_normalizer
import trafilatura
from bs4 import BeautifulSoup

Favor = Literal["balanced", "precision", "recall"]

# C0/C1 controls except tab and newline, plus invisible format characters that can hide or
# reorder text (zero-width, bidi overrides and isolates, BOM).
_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_BOILERPLATE_TAGS = ["script", "style", "noscript", "template", "svg", "iframe", "form"]
_LAYOUT_TAGS = ["nav", "header", "footer", "aside"]

logging.getLogger("trafilatura").setLevel(logging.ERROR)


def clean_text(text: str) -> str:
    """Strip control and invisible formatting characters; normalise line ends."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def _collapse(text: str) -> str:
    lines = (re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().strip("\"'")).name
    except LookupError:
        return None


def decode_body(body: bytes, header_charset: str | None, is_html: bool) -> str:
    """Decode by the Content-Type charset, then ``<meta charset>``, then detection."""
    encoding = _codec(header_charset)
    if encoding is None and body.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    if encoding is None and is_html:
        match = _META_CHARSET.search(body[:8192])
        encoding = _codec(match.group(1).decode("ascii", "ignore")) if match else None
    if encoding is None:
        best = charset_normalizer.from_bytes(body[:200_000]).best()
        encoding = _codec(best.encoding) if best is not None else None
    return body.decode(encoding or "utf-8", errors="replace")


def soup_text(html: str, drop_layout: bool = True) -> str:
    """BeautifulSoup ``get_text`` without scripts/styles (and, by default, nav/header/footer)."""
    soup = BeautifulSoup(html, "lxml")
    for tag in soup(_BOILERPLATE_TAGS + (_LAYOUT_TAGS if drop_layout else [])):
        tag.decompose()
    return _collapse(soup.get_text("\n"))


def extract_main_text(html: str, url: str | None = None, favor: Favor = "precision") -> str:
    """The page's main text, one paragraph per line; BeautifulSoup when trafilatura fails."""
    text = None
    try:
        text = trafilatura.extract(
            html,
            url=url,
            include_comments=False,
            include_tables=True,
            favor_precision=favor == "precision",
            favor_recall=favor == "recall",
            deduplicate=False,
        )
    except Exception:  # a malformed page must not fail the tool; fall back below
        text = None
    if not text or not text.strip():
        return soup_text(html)
    return _collapse(text)


def truncate_paragraphs(text: str, max_chars: int, marker: str = "\n[… truncated]") -> str:
    """At most ``max_chars`` characters, cut at a paragraph (else sentence, word) boundary."""
    if len(text) <= max_chars:
        return text
    budget = max(max_chars - len(marker), 1)
    head = text[:budget]
    for sep in ("\n", ". ", " "):
        cut = head.rfind(sep)
        if cut >= budget // 2:
            head = head[: cut + (1 if sep == ". " else 0)]
            break
    return head.rstrip() + marker
