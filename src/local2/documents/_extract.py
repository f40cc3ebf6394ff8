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
import json
import logging
import re
from collections.abc import Iterator
from datetime import date
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


# --- the page's own date ------------------------------------------------------------------
# When a page says it was published, in its metadata only: meta tags (Open Graph's
# ``article:published_time``, Highwire's ``citation_publication_date``/``citation_date`` as
# Google Scholar reads them, Dublin Core, schema.org's ``itemprop="datePublished"``) and
# JSON-LD's ``datePublished``. Not a date the text mentions, nor one in the URL: htmldate's
# and trafilatura's date search falls back on those (a history page would be dated by the
# year it is about), and a page dated wrongly would be left out of a run's window wrongly.
# The most specific names first; a modified date is never read as the published one.
_PUBLISHED_NAMES = (
    "article:published_time",
    "og:article:published_time",
    "citation_publication_date",
    "citation_date",
    "citation_online_date",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date",
    "dcterms.date",
    "dcterms.created",
    "prism.publicationdate",
    "datepublished",
    "parsely-pub-date",
    "sailthru.date",
    "pubdate",
    "publishdate",
    "publication_date",
    "date",
)
_RANK = {name: n for n, name in enumerate(_PUBLISHED_NAMES)}
_ISO_DAY = re.compile(r"^\s*(\d{4})(?:[-/.](\d{1,2})(?:[-/.](\d{1,2}))?)?(?:$|[T\s])")
_HEAD_CAP = 400_000  # metadata sits in the head and the first JSON-LD blocks


def _iso(value: str) -> str | None:
    """``2019-05-14T08:00:00Z``, ``2019/05/14``, ``2019-05`` or ``2019`` as ISO (as precise
    as given), or ``None`` for anything else (a date the calendar has not, a word)."""
    found = _ISO_DAY.match(value or "")
    if not found:
        return None
    year, month, day = (int(p) if p else 0 for p in found.groups())
    if not 1000 <= year <= 2999:
        return None
    try:
        if day:
            return date(year, month, day).isoformat()
        if month:
            return f"{date(year, month, 1).isoformat()[:7]}"
    except ValueError:
        return None
    return f"{year:04d}"


def _json_dates(value: object) -> Iterator[str]:
    """Every ``datePublished`` in a JSON-LD value (its ``@graph`` and nested objects)."""
    if isinstance(value, dict):
        published = value.get("datePublished")
        if isinstance(published, str):
            yield published
        for inner in value.values():
            if isinstance(inner, dict | list):
                yield from _json_dates(inner)
    elif isinstance(value, list):
        for item in value:
            yield from _json_dates(item)


def published_date(html: str) -> str | None:
    """The date a page's own metadata says it was published (ISO, as precise as it says:
    ``2019-05-14``, ``2019-05``, ``2019``), or ``None`` when it says none."""
    try:
        doc = lxml.html.document_fromstring(html[:_HEAD_CAP])
    except (etree.ParserError, ValueError):
        return None
    best: tuple[int, str] | None = None
    for meta in doc.iter("meta"):
        name = (meta.get("property") or meta.get("name") or meta.get("itemprop") or "").lower()
        rank = _RANK.get(name.strip())
        day = _iso(meta.get("content") or "") if rank is not None else None
        if rank is not None and day and (best is None or rank < best[0]):
            best = (rank, day)
    if best is not None:
        return best[1]
    for node in doc.xpath('//*[@itemprop="datePublished"]'):
        day = _iso(node.get("datetime") or node.get("content") or node.text_content())
        if day:
            return day
    for script in doc.xpath('//script[@type="application/ld+json"]'):
        try:
            data = json.loads(script.text or "")
        except ValueError:
            continue
        for value in _json_dates(data):
            if day := _iso(value):
                return day
    return None


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
