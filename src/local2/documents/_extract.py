"""Text as the model reads it: out of web content (main-text extraction, decoding, cleaning
and truncation), and a document's passages under their page markers.

Text out of web content: main-text extraction, decoding, cleaning and truncation.

trafilatura finds the article and drops navigation, cookie banners, comments and related
links (F1 0.958 on the public article-extraction benchmark, against 0.665 for plain
BeautifulSoup ``get_text``); BeautifulSoup is the fallback for pages it returns nothing for
(very short pages, app shells). ``bench/extraction.py`` measures both on our corpus.

trafilatura's time grows faster than the page (0.4 s for 10k elements, 8-17 s for 160k
here, on 2 busy cores), so a page with more than ``max_elements`` tags, or one that
outlasts its time budget in the extraction worker, gets ``fast_text`` instead: lxml's
parser and one pass over the tree, linear in the page.

A document's text as the model reads it: passages under ``[Page N]`` markers, page
ranges, ``#page=N`` links and the note that opens a fetched document.

Which passages to show is :mod:`local2.retrieval`'s (``pick_passages``); this module only
renders them, with their page, for citations (:func:`page_link`) and for reading on
(:func:`pages_text`).
"""

from __future__ import annotations

import codecs
import html as htmllib
import json
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Literal

import charset_normalizer
import lxml.html
from lxml import etree

from local2.documents._model import FORMAT_LABELS

if TYPE_CHECKING:
    from local2.documents._model import Document


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
# extraction worker (``local2.tools._extract_worker``) imports them once when it starts.


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


GAP = "[…]"


@dataclass(frozen=True)
class Passage:
    """A passage of a document: the page (slide, chapter) it is on, its place among the
    document's passages (``index``, reading order), and its relevance to the question."""

    page: int
    index: int
    text: str
    score: float


def page_marker(unit: str, page: int, count: int | None = None) -> str:
    """A page's marker line: ``[Page 3]``, ``[Slide 2 of 9]``."""
    of = f" of {count}" if count else ""
    return f"[{unit.capitalize()} {page}{of}]"


def render_passages(passages: Sequence[Passage], unit: str = "page") -> str:
    """Passages as text: a ``[Page N]`` line where the page changes, ``[…]`` where passages
    of one page were left out between two shown."""
    parts: list[str] = []
    previous: Passage | None = None
    for passage in passages:
        if previous is None or passage.page != previous.page:
            parts.append(page_marker(unit, passage.page))
        elif passage.index != previous.index + 1:
            parts.append(GAP)
        parts.append(passage.text)
        previous = passage
    return "\n".join(parts)


def pages_text(
    document: Document, first: int, last: int | None = None, max_chars: int | None = None
) -> str:
    """Pages ``first``..``last`` (inclusive; to the end when ``last`` is None), each under a
    ``[Page N of M]`` line; pages beyond ``max_chars`` are left out, and a last line says
    where to go on. ``ValueError`` names a range outside the document."""
    count = document.page_count
    end = count if last is None else last
    unit = document.unit
    if first < 1 or end < first:
        raise ValueError(f"{unit}s are numbered from 1, first to last: {first}-{end} is no range")
    if first > count:
        raise ValueError(f"the document has {count} {unit}{'s' if count != 1 else ''}")
    end = min(end, count)
    parts: list[str] = []
    size = 0
    for page in document.pages[first - 1 : end]:
        marker = page_marker(unit, page.number, count)
        block = f"{marker}\n{page.text or _empty(document, page.number)}"
        if max_chars is not None and parts and size + len(block) + 2 > max_chars:
            parts.append(
                f"[{unit.capitalize()}s {page.number}-{end} left out: over {max_chars:,} "
                f"characters; ask for them from {unit} {page.number}.]"
            )
            break
        if max_chars is not None and not parts and len(block) > max_chars:
            block = truncate_paragraphs(block, max_chars)
        parts.append(block)
        size += len(block) + 2
    return "\n\n".join(parts)


def _empty(document: Document, number: int) -> str:
    if number in document.no_text_pages:
        return "(no text layer on this page: a scan? OCR did not read it)"
    return "(no text on this page)"


def page_link(url: str, page: int | None) -> str:
    """``url`` opening at ``page``: the PDF open parameter ``#page=N`` (which browsers' PDF
    viewers follow), replacing any fragment; ``url`` unchanged without a page."""
    base = url.split("#", 1)[0]
    return f"{base}#page={page}" if page and page > 0 else url


def document_note(document: Document, url: str) -> str:
    """The line that opens a fetched document's text: what it is and how to cite a page,
    ``[Document: PDF, 40 pages, "Title"; cite a page as <url>#page=N]``."""

    count = document.page_count
    unit = document.unit
    title = f', "{" ".join(document.title.split())[:120]}"' if document.title.strip() else ""
    base = url.split("#", 1)[0]
    cite = f"{base}#page=N" if document.format == "pdf" else f"{base}, {unit} N"
    return (
        f"[Document: {FORMAT_LABELS[document.format]}, {count} {unit}{'s' if count != 1 else ''}"
        f"{title}; cite a {unit} as {cite}]"
    )


_SECTION = re.compile(r"^\[(Page|Slide|Chapter) (\d+)(?: of \d+)?\]$", re.M)


def page_sections(text: str) -> list[tuple[int, str]]:
    """The pages of a document's text as web_fetch, read_file and the document hits render
    it (``[Page N]`` or ``[Page N of M]`` lines, also Slide and Chapter), as ``(N, text)``
    in order; text before the first marker is left out. Research cites ``file, page N``
    with it, and checks a quote against the page it names."""
    found = list(_SECTION.finditer(text))
    sections = []
    for i, marker in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        sections.append((int(marker.group(2)), text[marker.end() : end].strip("\n")))
    return sections
