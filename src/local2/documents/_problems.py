"""The messages of a document that cannot be read: what is wrong, the limit, and the fix.

Readers raise these inside the worker; the server raises the same from what the worker
reports (or from how it died), so every surface shows one wording.
"""

from __future__ import annotations

from local2.documents._model import FORMAT_NAMES, Format
from local2.errors import DocumentTooLarge, DocumentUnreadable

_SETTING = "in documents.yaml (local2/config/_schema.py: DocumentsSettings)"


def over_limit(reason: str, what: str, key: str) -> DocumentUnreadable:
    """``what`` is over the setting ``documents.<key>``."""
    kind = DocumentTooLarge if reason == "too_large" else DocumentUnreadable
    return kind(
        f"{what} (documents.{key}).",
        reason,
        fix=f"If the document is genuine, raise documents.{key} {_SETTING}, or split it.",
    )


def encrypted(fmt: Format) -> DocumentUnreadable:
    return DocumentUnreadable(
        f"The {FORMAT_NAMES[fmt]} is encrypted: it needs a password to open.",
        "encrypted",
        fix="Save or print a copy without a password, and use that.",
    )


def corrupt(fmt: Format, detail: str) -> DocumentUnreadable:
    return DocumentUnreadable(
        f"The file is not a readable {FORMAT_NAMES[fmt]} ({detail}).",
        "corrupt",
        fix="Check that the file is complete (a download cut short is truncated) and opens "
        "in its own program; saving it again there often repairs it.",
    )


def unsupported(detail: str) -> DocumentUnreadable:
    return DocumentUnreadable(
        f"No reader for this file: {detail}.",
        "unsupported",
        fix="Documents can be PDF, DOCX, PPTX, ODT, EPUB, HTML, Markdown or text files.",
    )


def archive(fmt: Format, detail: str, key: str) -> DocumentUnreadable:
    return over_limit("archive", f"The {FORMAT_NAMES[fmt]} (a zip file) {detail}", key)
