"""Text out of web content: main-text extraction, decoding, cleaning and truncation.

trafilatura finds the article and drops navigation, cookie banners, comments and related
links (F1 0.958 on the public article-extraction benchmark, against 0.665 for plain
BeautifulSoup ``get_text``); BeautifulSoup is the fallback for pages it returns nothing for
(very short pages, app shells). ``bench/extraction.py`` measures both on our corpus.

trafilatura's time grows faster than the page (0.4 s for 10k elements, 8-17 s for 160k
here, on 2 busy cores), so a page with more than ``max_elements`` tags, or one that
outlasts its time budget in the extraction worker, gets ``fast_text`` instead: lxml's
parser and one pass over the tree, linear in the page.
"""

from __future__ import annotations

import codecs
import html as htmllib
import logging
import re
from typing import Literal

import charset_normalizer
import lxml.html
from lxml import etree

Favor = Literal["balanced", "precision", "recall"]

# C0/C1 controls except tab and newline, plus invisible format characters that can hide or
# reorder text (zero-width, bidi overrides and isolates, BOM).
_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_BOILERPLATE_TAGS = ["script", "style", "noscript", "template", "svg", "iframe", "form"]
_LAYOUT_TAGS = ["nav", "header", "footer", "aside"]
_BLOCK_TAGS = (
    "p", "div", "section", "article", "main", "li", "dt", "dd", "tr", "br", "pre", "blockquote",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol", "dl", "figure", "figcaption",
    "header", "footer", "aside", "nav",
)  # fmt: skip
_BLOCK_TAG = re.compile(rf"</?(?:{'|'.join(_BLOCK_TAGS)})\b[^>]*>", re.I)
_ANY_TAG = re.compile(r"<[^>]*>")
MAX_ELEMENTS = 50_000  # above this many tags trafilatura is skipped for fast_text

logging.getLogger("trafilatura").setLevel(logging.ERROR)
# The parsers are imported where used: the server only decodes and cleans, and the
# extraction worker (``local2.tools.extract_worker``) imports them once when it starts.


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
    # bs4: 50 modules at import; only the extract worker reads pages
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    for tag in soup(_BOILERPLATE_TAGS + (_LAYOUT_TAGS if drop_layout else [])):
        tag.decompose()
    return _collapse(soup.get_text("\n"))


def extract_main_text(html: str, url: str | None = None, favor: Favor = "precision") -> str:
    """The page's main text, one paragraph per line; BeautifulSoup when trafilatura fails."""
    # trafilatura: 216 modules at import; only the extract worker reads pages
    import trafilatura

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


def fast_text(html: str, drop_layout: bool = True) -> str:
    """Every block's text, one per line, in time linear in the page (no main-text scoring).

    ``drop_layout`` leaves out nav, header, footer and aside (a web page's chrome; in a
    book's chapter they hold its heading and notes).

    lxml parses and drops scripts, styles and layout; the tree is serialised back (tags now
    well formed, attributes escaped) and block tags become line breaks by regex: all in C,
    where setting a newline on each of 700k elements in Python took 4 s.
    """

    try:
        doc = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return ""
    dropped = [*_BOILERPLATE_TAGS, *(_LAYOUT_TAGS if drop_layout else [])]
    etree.strip_elements(doc, etree.Comment, *dropped, with_tail=False)
    markup = etree.tostring(doc, encoding="unicode", method="html")
    text = _ANY_TAG.sub("", _BLOCK_TAG.sub("\n", markup))
    return _collapse(htmllib.unescape(text))


def extract_page(
    html: str, url: str | None = None, favor: Favor = "precision", max_elements: int = MAX_ELEMENTS
) -> tuple[str, str]:
    """The page's main text and how it was found: ``trafilatura``, or ``fast`` and why."""
    tags = html.count("<")
    if tags > max_elements:
        return fast_text(html), f"fast: {tags:,} tags over the {max_elements:,} cap"
    return extract_main_text(html, url, favor), "trafilatura"


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
