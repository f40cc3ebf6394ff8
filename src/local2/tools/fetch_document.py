"""``web_fetch`` of a document (PDF, DOCX, PPTX, ODT, EPUB): its pages read in the document
worker (:mod:`local2.documents`), the passages for the question picked across its pages.

A document is told from a web page by its media type, its first bytes or, when the server
labels it vaguely (``application/octet-stream``), the extension of the URL's path. It may be
larger than a page (``web.fetch.max_document_bytes``) and take longer
(``web.fetch.document_timeout_s``); a download cut at the cap is refused, since a truncated
PDF has no trailer to read.

The result keeps web_fetch's shape (``URL: <url>\\nExtracted text:\\n...``) so every reader
of fetch results goes on working; the text opens with one line saying what the document is
and how to cite a page, then the passages, each page's under its own marker:

    URL: https://example.org/report.pdf
    Extracted text:
    [Document: PDF, 40 pages, "Annual report"; cite a page as https://example.org/report.pdf#page=N]
    [Page 3]
    ...
    [Page 12]
    ...

(:func:`local2.documents._passages.page_sections` splits such text back into its pages.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any, TypedDict
from urllib.parse import unquote, urlsplit

from local2.config import DocumentsSettings
from local2.documents import (
    Document,
    declared_format,
    document_note,
    guess_format,
    page_link,
    read_document,
    render_passages,
)
from local2.errors import DocumentUnreadable, ToolError
from local2.retrieval import pick_passages

# Formats that are documents rather than pages (HTML and text stay web_fetch's own path).
DOCUMENT_FORMATS = frozenset({"pdf", "docx", "pptx", "odt", "epub"})
VAGUE_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})

Reader = Callable[..., Document]


class DocumentOptions(TypedDict, total=False):
    """How :func:`document_result` reads a document, when not as usual: another reader, and
    who is given the whole document read (the library)."""

    reader: Reader
    seen: Callable[[Document], None] | None


def url_name(url: str) -> str:
    """The file name at the end of a URL's path (``/papers/a%20b.pdf`` -> ``a b.pdf``)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return ""
    return PurePosixPath(unquote(path)).name


def is_document(media_type: str, url: str, head: bytes = b"") -> bool:
    """Whether a response is a document: by its bytes when they are there, else by its
    media type, else (a vague type) by the extension of the URL's path."""
    if head:
        return guess_format(url_name(url), media_type, head) in DOCUMENT_FORMATS
    vague = media_type in VAGUE_TYPES
    return declared_format(url_name(url) if vague else "", media_type) in DOCUMENT_FORMATS


def document_result(
    url: str,
    body: bytes,
    media_type: str,
    question: str,
    budget_chars: int,
    cfg: DocumentsSettings,
    deadline: float,
    cancel: threading.Event | None,
    reader: Reader = read_document,
    seen: Callable[[Document], None] | None = None,
) -> tuple[str, dict[str, Any]]:  # the text, and the data for ToolResult.data
    """The text the model reads of a fetched document and the data kept beside it
    (``seen``: given the whole document read, for the library)."""
    try:
        document = reader(
            body,
            cfg,
            name=url_name(url),
            media_type=media_type,
            deadline=deadline,
            cancel=cancel,
        )
    except DocumentUnreadable as exc:
        if exc.reason == "timeout":
            raise TimeoutError from None  # web_fetch's own "fetch timeout after Ns"
        if exc.reason == "cancelled":
            raise ToolError(f"fetch cancelled: {url}") from None
        raise ToolError(f"fetch error: {exc.message}", fix=exc.fix) from None
    if seen is not None:
        seen(document)
    note = document_note(document, url)
    passages = pick_passages(document, question, max(budget_chars - len(note) - 1, 200))
    shown = sorted({p.page for p in passages})
    body_text = render_passages(passages, document.unit) or _nothing(document)
    data: dict[str, Any] = {  # ToolResult.data: what the model was shown of the document
        "document": {
            "format": document.format,
            "title": document.title,
            "unit": document.unit,
            "pages": document.page_count,
            "pages_shown": shown,
            "no_text_pages": list(document.no_text_pages),
            "ocr_pages": list(document.ocr_pages),
            "notes": list(document.notes),
        },
        "page_links": {str(page): page_link(url, page) for page in shown},
        "chars": document.chars,
        "chars_shown": sum(len(p.text) for p in passages),
        "passages_shown": len(passages),
        "extraction": f"document:{document.format}",
    }
    return f"{note}\n{body_text}", data


def _nothing(document: Document) -> str:
    """What the model reads of a document with no text at all (a scan, OCR off)."""
    return " ".join(["(The document has no text layer.)", *document.notes])
