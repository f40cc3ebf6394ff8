"""The document reader's worker: ``python -m local2.documents._job MEMORY_MB`` (bounded).

One job is one document: the header names its format and limits, the body is its bytes;
the reply is the :class:`Document` or the reason it cannot be read. The format libraries
are imported here, in the worker, never in the server.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any, NotRequired, TypedDict

from local2.bounded import Limiter, serve
from local2.documents._model import FORMATS, Document, DocumentWire, Format, Limits
from local2.documents._ocr import PageOcr, ocr_installed
from local2.documents._problems import corrupt, unsupported
from local2.documents._web import read_html, read_text
from local2.errors import DocumentUnreadable

Reader = Callable[[bytes, Limits], Document]
_OCR: list[PageOcr] = []  # one engine per worker, loaded on first use


def _reader(fmt: Format, limits: Limits) -> Reader:
    if fmt == "pdf":
        # a format's reader and library load with its first document (pypdfium2: 60 modules)
        from local2.documents._pdf import read_pdf

        engine = _ocr(limits)
        return lambda data, lim: read_pdf(data, lim, engine)
    if fmt == "docx":
        # each format's reader and its library load with its first document
        from local2.documents._word import read_docx

        return read_docx
    if fmt == "pptx":
        # each format's reader and its library load with its first document (pptx: 171 modules)
        from local2.documents._slides import read_pptx

        return read_pptx
    if fmt == "odt":
        # each format's reader and its library load with its first document
        from local2.documents._odt import read_odt

        return read_odt
    if fmt == "epub":
        # each format's reader and its library load with its first document
        from local2.documents._epub import read_epub

        return read_epub

    return read_html if fmt == "html" else read_text


def _ocr(limits: Limits) -> PageOcr | None:
    if not limits.ocr or not ocr_installed():
        return None
    if not _OCR:
        _OCR.append(PageOcr(limits.ocr_memory_mb))
    _OCR[0].memory_mb = limits.ocr_memory_mb
    return _OCR[0]


class DocumentReply(TypedDict):
    """The worker's reply: the document read, or why not (``reason``, ``error``, ``fix``)."""

    ok: bool
    document: NotRequired[DocumentWire]
    reason: NotRequired[str]
    error: NotRequired[str]
    fix: NotRequired[str]
    recycle: NotRequired[bool]  # the worker ends after this job (OCR loaded, a library failed)


def read_job(header: Mapping[str, Any], body: bytes, limit: Limiter | None = None) -> DocumentReply:
    """Read one document: ``{"ok": true, "document": ...}`` or why not."""
    fmt = str(header.get("format", ""))
    limits = Limits.from_wire(header.get("limits") or {})
    if fmt not in FORMATS:
        return _refusal(unsupported(f"unknown format {fmt!r}"))
    try:
        document = _reader(fmt, limits)(body, limits)
    except DocumentUnreadable as exc:
        return _refusal(exc)
    except MemoryError:
        raise  # the worker's own limit: reported as such
    except Exception as exc:  # a library failing on a damaged file; this worker is replaced
        problem = corrupt(fmt, f"{type(exc).__name__}: {str(exc)[:300]}")
        return {**_refusal(problem), "recycle": True}
    # the OCR engine holds hundreds of MB: a worker that loaded it gives them back by ending
    recycle = bool(_OCR) and _OCR[0].loaded
    return {"ok": True, "document": document.to_wire(), "recycle": recycle}


def _refusal(problem: DocumentUnreadable) -> DocumentReply:
    return {"ok": False, "reason": problem.reason, "error": problem.message, "fix": problem.fix}


def _warm() -> None:
    """Import what most documents need (PDFs) before the first one; the rest on first use."""
    # the worker's warm-up: these imports (pypdfium2: 60 modules) are what it makes early
    import pypdfium2  # noqa: F401
    from lxml import etree  # noqa: F401


if __name__ == "__main__":
    serve(read_job, int(sys.argv[1]) if len(sys.argv) > 1 else 2048, "the document", _warm)
