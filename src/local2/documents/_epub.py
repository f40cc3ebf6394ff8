"""EPUB: the container's package document gives the reading order; each spine item is a page.

ebooklib is AGPL, so the route is the one the OCF spec describes: ``META-INF/container.xml``
names the package document (OPF), whose manifest maps ids to files and whose spine lists
them in reading order (``linear="no"`` items, such as notes, stay in their place). Hrefs
are relative to the OPF's folder and URL-encoded. Each XHTML item's text is taken block by
block with lxml, headers, asides and footnotes kept (``fast_text``).
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote, urldefrag

from local2.documents._extract import clean_text, decode_body, fast_text
from local2.documents._model import Document, Limits
from local2.documents._pages import PageBuilder, check_page_count
from local2.documents._problems import corrupt
from local2.documents._safezip import SafeZip
from local2.documents._xml import dc_title, parse

CONTAINER = "META-INF/container.xml"
OPF = "{http://www.idpf.org/2007/opf}"
OCF = "{urn:oasis:names:tc:opendocument:xmlns:container}"
HTML_TYPES = {"application/xhtml+xml", "text/html"}
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_HEAD = re.compile(r"<head\b.*?</head\s*>", re.I | re.S)
_TEXT_SUFFIXES = (".xhtml", ".html", ".htm", ".xml", ".opf", ".ncx")


def _wanted(name: str) -> bool:
    return name.lower().endswith(_TEXT_SUFFIXES) or name == "mimetype"


def _package_path(package: SafeZip) -> str:
    if CONTAINER not in package:
        raise corrupt("epub", f"it has no {CONTAINER}")
    root = parse(package.read(CONTAINER), "epub", CONTAINER)
    for rootfile in root.iter(f"{OCF}rootfile"):
        path = rootfile.get("full-path")
        if path and rootfile.get("media-type", "application/oebps-package+xml").endswith("xml"):
            return path
    raise corrupt("epub", f"{CONTAINER} names no package document")


def spine(package: SafeZip) -> tuple[str, list[str]]:
    """The book's title and its spine: member names of the XHTML items in reading order."""
    opf_path = _package_path(package)
    if opf_path not in package:
        raise corrupt("epub", f"its package document {opf_path} is missing")
    opf = parse(package.read(opf_path), "epub", opf_path)
    folder = posixpath.dirname(opf_path)
    manifest: dict[str, tuple[str, str]] = {}
    for item in opf.iter(f"{OPF}item"):
        href = unquote(urldefrag(item.get("href", "")).url)
        path = posixpath.normpath(posixpath.join(folder, href)) if href else ""
        manifest[item.get("id", "")] = (path, item.get("media-type", ""))
    order: list[str] = []
    for ref in opf.iter(f"{OPF}itemref"):
        path, media = manifest.get(ref.get("idref", ""), ("", ""))
        if path and media in HTML_TYPES:
            order.append(path)
    return dc_title(opf), order


def chapter_text(data: bytes) -> str:
    """An XHTML item's text, one block per line, nothing left out as layout."""
    try:
        markup = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        markup = decode_body(data, None, is_html=True)
    # lxml refuses a str that declares its encoding (the bytes are decoded already); the
    # head's <title> repeats the chapter's heading
    markup = _HEAD.sub("", _XML_DECLARATION.sub("", markup, count=1), count=1)
    return clean_text(fast_text(markup, drop_layout=False))


def read_epub(data: bytes, limits: Limits) -> Document:
    package = SafeZip(data, "epub", limits, _wanted)
    title, order = spine(package)
    if not order:
        raise corrupt("epub", "its spine lists no XHTML chapter")
    check_page_count(len(order), "epub", limits)
    out = PageBuilder("epub", limits)
    for path in order:
        out.add_page(chapter_text(package.read(path)) if path in package else "")
    return Document("epub", title, out.pages())
