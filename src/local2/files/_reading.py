"""A document in the sandbox read into pages, once: by the document worker, remembered by
file, size and modification time, so ``read_file`` of page 12 after page 3 (or after the
index read it) does not read a 500-page PDF again.

A document its reader refuses is a :class:`~local2.errors.SandboxError` ``UNREADABLE`` whose
message names the limit or the problem, and what to do: the model reads it like any other
refusal of the file tools.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from local2.documents import read_document
from local2.errors import DocumentUnreadable, SandboxError
from local2.files._sandbox import UNREADABLE, FileRef, Sandbox

if TYPE_CHECKING:
    from local2.config import DocumentsSettings
    from local2.documents import Document

CACHED = 8  # documents kept in memory (a 500-page PDF's text is a few MB)


class DocumentReader(Protocol):
    """How bytes become a document (``local2.documents.read_document``; tests bring theirs);
    ``deadline`` (``time.monotonic()``): the caller's, when it has one shorter than the
    worker's own ``documents.timeout_s`` (grep_files' time budget)."""

    def __call__(
        self, data: bytes, cfg: DocumentsSettings, *, name: str, deadline: float | None = None
    ) -> Document: ...


@dataclass(frozen=True)
class ReadDocument:
    """A document of the sandbox as read: its pages, and the bytes they came from."""

    ref: FileRef
    document: Document
    data: bytes


def _read_document(
    data: bytes, cfg: DocumentsSettings, *, name: str, deadline: float | None = None
) -> Document:

    return read_document(data, cfg, name=name, deadline=deadline)


class Documents:
    """Reads the sandbox's documents through the document worker, keeping the last few."""

    def __init__(self, cfg: DocumentsSettings, reader: DocumentReader | None = None) -> None:
        self.cfg = cfg
        self.reader: DocumentReader = reader or _read_document
        self._cache: OrderedDict[tuple[str, int, int], ReadDocument] = OrderedDict()
        self._lock = threading.Lock()
        self.reads = 0  # documents read by the worker (what re-indexing must not repeat)

    def read(
        self,
        sandbox: Sandbox,
        ref: FileRef,
        data: bytes | None = None,
        deadline: float | None = None,
    ) -> ReadDocument:
        """``ref``'s pages (``data``: its bytes, when the caller has them already;
        ``deadline``: when the caller must have them by, else the worker's own limit)."""
        found = self.cached(ref)
        if found is not None:
            return found
        key = _key(ref)
        data = sandbox.read_bytes(ref) if data is None else data
        try:
            if deadline is None:
                document = self.reader(data, self.cfg, name=ref.rel.name)
            else:
                document = self.reader(data, self.cfg, name=ref.rel.name, deadline=deadline)
        except DocumentUnreadable as exc:
            raise SandboxError(UNREADABLE, f"{ref.display}: {exc}") from None
        read = ReadDocument(ref, document, data)
        self._keep(key, read)
        with self._lock:
            self.reads += 1
        return read

    def cached(self, ref: FileRef) -> ReadDocument | None:
        """``ref``'s pages if they are kept here as the file is now (None: not kept)."""
        key = _key(ref)
        with self._lock:
            found = self._cache.get(key)
            if found is None:
                return None
            self._cache.move_to_end(key)
            return ReadDocument(ref, found.document, found.data)

    def remember(self, ref: FileRef, document: Document, data: bytes) -> None:
        """Keep a document read elsewhere (an upload, read before it was stored)."""
        self._keep(_key(ref), ReadDocument(ref, document, data))

    def _keep(self, key: tuple[str, int, int], read: ReadDocument) -> None:
        with self._lock:
            self._cache[key] = read
            while len(self._cache) > CACHED:
                self._cache.popitem(last=False)


def _key(ref: FileRef) -> tuple[str, int, int]:
    """A file as it is now: its path, size and modification time."""
    stat = ref.path.stat()
    return (str(ref.path), stat.st_size, stat.st_mtime_ns)
