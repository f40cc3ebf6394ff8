"""Which reader a file needs, from its first bytes, its media type and its name.

Content wins over names: a PDF is a PDF whatever it is called, and ODT and EPUB say what
they are in their first zip entry (``mimetype``). Word and PowerPoint files are zips told
apart by their parts' names, else by the file's extension or media type. Cheap enough for
the server: no parsing.
"""

from __future__ import annotations

from pathlib import PurePath

from local2.documents._model import Format

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
