"""Reading a document from the server: its bytes to a bounded worker, a :class:`Document` back.

This is the part's API (the readers themselves run in :mod:`local2.documents._job`). Every
failure is a :class:`DocumentUnreadable` whose message names what is wrong and the limit,
and whose ``fix`` says what to do; the worker that failed is replaced, so the next
document reads as usual.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TypedDict

from typing_extensions import Unpack

from local2.bounded import WorkerPool, pool_for
from local2.config import DocumentsSettings
from local2.documents._model import FORMAT_NAMES, Document, Format, JobHeader, Limits, guess_format
from local2.documents._problems import over_limit, unsupported
from local2.errors import (
    DocumentUnreadable,
    ExtractionCancelled,
    ExtractionFailed,
    ExtractionTimeout,
)

DOCUMENT_POOL = pool_for("local2.documents._job", "document reading")
_MB = 1024 * 1024
_BASE_MB = 512  # the worker itself: Python, PDFium, lxml


@dataclass(frozen=True)
class Reading:
    """One document's outcome and what the worker spent on it (benchmarks, tests)."""

    document: Document | None
    error: DocumentUnreadable | None
    seconds: float
    rss_before_mb: float  # the worker's resident memory when the document arrived
    rss_peak_mb: float  # its peak while reading (a worker that died: its lifetime peak)

    def result(self) -> Document:
        if self.error is not None:
            raise self.error
        assert self.document is not None
        return self.document


def worker_memory_mb(cfg: DocumentsSettings) -> int:
    """The worker's address-space ceiling; each document is held to ``memory_mb`` below it."""
    return int(_BASE_MB + cfg.memory_mb + cfg.ocr_memory_mb + 3 * cfg.max_bytes / _MB)


class ReadOptions(TypedDict, total=False):
    """How a document is read: ``name`` and ``media_type`` help tell its format;
    ``deadline`` (``time.monotonic()``) shortens ``documents.timeout_s``; ``cancel`` stops
    the reading early; ``pool`` is the workers' (tests and benchmarks bring their own)."""

    name: str
    media_type: str
    deadline: float | None
    cancel: threading.Event | None
    pool: WorkerPool


def read_document(data: bytes, cfg: DocumentsSettings, **options: Unpack[ReadOptions]) -> Document:
    """The document's pages; :class:`DocumentUnreadable` when it cannot be read."""
    return measure_reading(data, cfg, **options).result()


def measure_reading(
    data: bytes,
    cfg: DocumentsSettings,
    name: str = "",
    media_type: str = "",
    deadline: float | None = None,
    cancel: threading.Event | None = None,
    pool: WorkerPool = DOCUMENT_POOL,
) -> Reading:
    """:func:`read_document`, with the worker's time and memory beside the outcome."""
    started = time.monotonic()
    try:
        fmt = _format_of(data, cfg, name, media_type)
    except DocumentUnreadable as exc:
        return Reading(None, exc, 0.0, 0.0, 0.0)
    own = started + cfg.timeout_s
    until = own if deadline is None else min(deadline, own)
    header: JobHeader = {
        "format": fmt,
        "limits": Limits.from_settings(cfg).to_wire(),
        "cpu_s": cfg.cpu_s,
        "headroom_mb": cfg.memory_mb,
    }
    try:
        reply = pool.run(header, data, worker_memory_mb(cfg), until, cancel)
    except ExtractionFailed as exc:
        return Reading(None, _failure(exc, cfg), time.monotonic() - started, 0, exc.peak_rss_mb)
    except ExtractionTimeout:
        error = _timed_out(cfg, fmt, caller=deadline is not None and deadline < own)
        return Reading(None, error, time.monotonic() - started, 0.0, 0.0)
    except ExtractionCancelled:
        error = DocumentUnreadable("Reading the document was cancelled.", "cancelled")
        return Reading(None, error, time.monotonic() - started, 0.0, 0.0)
    return Reading(
        Document.from_wire(reply["document"]),
        None,
        time.monotonic() - started,
        float(reply.get("rss_before_mb", 0.0)),
        float(reply.get("rss_peak_mb", 0.0)),
    )


def _format_of(data: bytes, cfg: DocumentsSettings, name: str, media_type: str) -> Format:
    if len(data) > cfg.max_bytes:
        raise over_limit(
            "too_large",
            f"The file is {len(data) / _MB:,.1f} MB, over the limit of "
            f"{cfg.max_bytes / _MB:,.1f} MB",
            "max_bytes",
        )
    fmt = guess_format(name, media_type, data[:65536])
    if fmt is None:
        described = ", ".join(x for x in (name, media_type) if x) or "unnamed"
        raise unsupported(f"{described} is not a document format LoCAL2 reads")
    return fmt


def _failure(exc: ExtractionFailed, cfg: DocumentsSettings) -> DocumentUnreadable:
    """What the worker said, or how it died, as the person should read it."""
    if exc.reason == "memory":
        return over_limit(
            "memory",
            f"Reading the document needed more than the {cfg.memory_mb} MB of memory it may "
            "use, or crashed the reader",
            "memory_mb",
        )
    if exc.reason == "cpu":
        return over_limit(
            "cpu", f"Reading the document used more than {cfg.cpu_s:g} s of CPU time", "cpu_s"
        )
    if exc.reason in ("crashed", "killed", "time", "error"):
        return DocumentUnreadable(
            f"The document reader stopped without an answer ({exc.message}).",
            "crashed",
            fix="The file may be damaged or built to harm a reader; open it in its own program.",
        )
    return DocumentUnreadable(exc.message, exc.reason, exc.fix)


def _timed_out(cfg: DocumentsSettings, fmt: Format, caller: bool) -> DocumentUnreadable:
    what = f"Reading the {FORMAT_NAMES[fmt]}"
    if caller:
        return DocumentUnreadable(
            f"{what} did not finish within the time this request allows.", "timeout"
        )
    return over_limit("timeout", f"{what} took longer than {cfg.timeout_s:g} s", "timeout_s")
