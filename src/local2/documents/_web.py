"""HTML and plain-text files: the web page's main text (trafilatura, as ``web_fetch`` reads
pages), and text files split into pages at form feeds (as ``pdftotext`` writes them)."""

from __future__ import annotations

import html
import re

from local2.documents._extract import clean_text, decode_body, extract_page
from local2.documents._model import Document, Limits
from local2.documents._pages import PageBuilder

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)


def read_html(data: bytes, limits: Limits) -> Document:
    markup = decode_body(data, None, is_html=True)
    text, _ = extract_page(markup, favor="recall")
    found = _TITLE.search(markup[:100_000])
    title = " ".join(html.unescape(found.group(1)).split()) if found else ""
    out = PageBuilder("html", limits)
    out.add_page(clean_text(text))
    return Document("html", clean_text(title), out.pages())


def read_text(data: bytes, limits: Limits) -> Document:
    text = decode_body(data, None, is_html=False)
    out = PageBuilder("text", limits)
    for page in text.split("\f"):
        out.add_page(clean_text(page))
    return Document("text", "", out.pages())
