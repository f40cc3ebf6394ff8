"""What a reader makes of a document: its pages of text, and what could not be read.

A document is a list of pages, numbered from 1, in the unit its format has: PDF pages, PPTX
slides, EPUB chapters (spine items), and for DOCX and ODT the pages as the word processor
last laid them out when it saved the file (Word's ``lastRenderedPageBreak``, LibreOffice's
``soft-page-break``), else the stretches between hard page breaks. HTML is one page; a text
file is split at form feeds. These records cross the worker's pipe as JSON (``to_wire``).

Which reader a file needs, from its first bytes, its media type and its name.

Content wins over names: a PDF is a PDF whatever it is called, and ODT and EPUB say what
they are in their first zip entry (``mimetype``). Word and PowerPoint files are zips told
apart by their parts' names, else by the file's extension or media type. Cheap enough for
the server: no parsing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import PurePath
from typing import Any, Literal, TypedDict, cast, get_args

from local2.config import DocumentsSettings

Format = Literal["pdf", "docx", "pptx", "odt", "epub", "html", "text"]
FORMATS: tuple[Format, ...] = get_args(Format)

FORMAT_NAMES: dict[Format, str] = {
    "pdf": "PDF",
    "docx": "Word document (DOCX)",
    "pptx": "PowerPoint presentation (PPTX)",
    "odt": "OpenDocument text (ODT)",
    "epub": "EPUB e-book",
    "html": "web page (HTML)",
    "text": "text file",
}
FORMAT_LABELS: dict[Format, str] = {
    "pdf": "PDF",
    "docx": "DOCX",
    "pptx": "PPTX",
    "odt": "ODT",
    "epub": "EPUB",
    "html": "HTML",
    "text": "text",
}
UNITS: dict[Format, str] = {
    "pdf": "page",
    "docx": "page",
    "pptx": "slide",
    "odt": "page",
    "epub": "chapter",
    "html": "page",
    "text": "page",
}


@dataclass(frozen=True)
class Page:
    """One page (slide, chapter) of text; ``number`` counts from 1 in the document's order."""

    number: int
    text: str
    ocr: bool = False  # the text was read from the page's image


class DocumentWire(TypedDict):
    """A :class:`Document` as it crosses the worker's pipe: each page ``[number, text, ocr]``."""

    format: Format
    title: str
    pages: list[tuple[int, str, bool]]
    no_text_pages: list[int]
    notes: list[str]


@dataclass(frozen=True)
class Document:
    """A document read into pages; ``no_text_pages`` had something drawn but no text layer
    and were not read by OCR (``notes`` says why and how to turn it on)."""

    format: Format
    title: str
    pages: tuple[Page, ...]
    no_text_pages: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def unit(self) -> str:
        return UNITS[self.format]

    @property
    def page_count(self) -> int:
        return len(self.pages)

    @property
    def chars(self) -> int:
        return sum(len(p.text) for p in self.pages)

    @property
    def ocr_pages(self) -> tuple[int, ...]:
        return tuple(p.number for p in self.pages if p.ocr)

    def text(self, first: int = 1, last: int | None = None) -> str:
        """Pages ``first``..``last`` (inclusive) joined by blank lines."""
        end = self.page_count if last is None else last
        return "\n\n".join(p.text for p in self.pages if first <= p.number <= end and p.text)

    def to_wire(self) -> DocumentWire:
        return {
            "format": self.format,
            "title": self.title,
            "pages": [(p.number, p.text, p.ocr) for p in self.pages],
            "no_text_pages": list(self.no_text_pages),
            "notes": list(self.notes),
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Document:
        fmt = str(data["format"])
        if fmt not in FORMATS:
            raise ValueError(f"unknown document format {fmt!r}")
        return cls(
            format=fmt,
            title=str(data.get("title") or ""),
            pages=tuple(Page(int(n), str(t), bool(o)) for n, t, o in data["pages"]),
            no_text_pages=tuple(int(n) for n in data.get("no_text_pages") or ()),
            notes=tuple(str(n) for n in data.get("notes") or ()),
        )


class LimitsWire(TypedDict):
    """:class:`Limits` as they cross the worker's pipe (its fields, by name)."""

    max_pages: int
    max_chars: int
    zip_max_members: int
    zip_max_unpacked_mb: int
    zip_max_ratio: int
    ocr: bool
    ocr_max_pages: int
    ocr_dpi: int
    ocr_memory_mb: int


class JobHeader(TypedDict):
    """What the server sends the worker with a document's bytes (:func:`read_job`)."""

    format: Format
    limits: LimitsWire
    cpu_s: float  # the worker's CPU time for this document
    headroom_mb: int  # memory the document may add to the worker's own


@dataclass(frozen=True)
class Limits:
    """What one document may cost; the worker checks them as it reads (``documents.yaml``)."""

    max_pages: int = 2000
    max_chars: int = 10_000_000
    zip_max_members: int = 10_000
    zip_max_unpacked_mb: int = 64
    zip_max_ratio: int = 200
    ocr: bool = True
    ocr_max_pages: int = 50
    ocr_dpi: int = 150
    ocr_memory_mb: int = 1536

    @classmethod
    def from_settings(cls, cfg: DocumentsSettings) -> Limits:
        return cls(**{f.name: getattr(cfg, f.name) for f in fields(cls)})

    def to_wire(self) -> LimitsWire:
        return cast("LimitsWire", asdict(self))  # asdict types its dict loosely

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Limits:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


EXTENSIONS: dict[str, Format] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".odt": "odt",
    ".epub": "epub",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".txt": "text",
    ".md": "text",
    ".markdown": "text",
    ".rst": "text",
}
MEDIA_TYPES: dict[str, Format] = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.oasis.opendocument.text": "odt",
    "application/epub+zip": "epub",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
    "text/markdown": "text",
}
_ZIP = b"PK\x03\x04"
_MIMETYPE_ENTRY = b"mimetype"  # ODF and EPUB: the first entry, stored, at offset 30


def guess_format(name: str = "", media_type: str = "", head: bytes = b"") -> Format | None:
    """The document's format, or None when no reader fits (``head``: its first 64 KB)."""
    if b"%PDF-" in head[:1024]:
        return "pdf"
    by_type = MEDIA_TYPES.get(media_type.split(";", 1)[0].strip().lower())
    by_name = EXTENSIONS.get(PurePath(name).suffix.lower()) if name else None
    if head.startswith(_ZIP):
        if head[30:38] == _MIMETYPE_ENTRY:
            declared = head[38:120]
            if declared.startswith(b"application/epub+zip"):
                return "epub"
            if declared.startswith(b"application/vnd.oasis.opendocument.text"):
                return "odt"
        if b"word/" in head:
            return "docx"
        if b"ppt/" in head:
            return "pptx"
        zipped = {"docx", "pptx", "odt", "epub"}
        return next((f for f in (by_type, by_name) if f in zipped), None)
    if by_type in ("pdf", "docx", "pptx", "odt", "epub"):
        return None  # says it is one, but its bytes are not
    if by_name in ("pdf", "docx", "pptx", "odt", "epub"):
        return None
    sniff = head.lstrip()[:100].lower()
    if sniff.startswith((b"<!doctype html", b"<html")):
        return "html"
    return by_type or by_name


def declared_format(name: str = "", media_type: str = "") -> Format | None:
    """The format a media type (else a file name's extension) claims, before any bytes are
    seen: a download decides its cap from it; the bytes, when they come, have the last word
    (:func:`guess_format`)."""
    by_type = MEDIA_TYPES.get(media_type.split(";", 1)[0].strip().lower())
    return by_type or (EXTENSIONS.get(PurePath(name).suffix.lower()) if name else None)
