"""Documents' lines, page by page, for ``grep_files``: without reading a document again when
it can be helped.

Where they come from, cheapest first: the documents read lately (:mod:`._reading`'s cache),
the index's chunks while the file's entry there is current (:meth:`FileIndex.current_files`:
a document indexed once is not read again until it changes; one Chroma read for a batch of
documents), else the document worker, within the caller's deadline as well as its own
limits, so a huge or hostile document cannot hold the caller past its time. A document its
reader refused when it was indexed is kept as refused (``refused`` says why), and one it
refuses now is :class:`~local2.errors.SandboxError` ``UNREADABLE`` naming why.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from local2.files._reading import Documents
from local2.files._sandbox import FileRef, Sandbox

if TYPE_CHECKING:
    from local2.documents import Document
    from local2.files._index import FileIndex, IndexedFile

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PageLine:
    """One line of a document: its page (slide, chapter), its line on that page, its text."""

    page: int
    line: int
    text: str


@dataclass(frozen=True)
class DocumentLines:
    """A document's lines in order and what its pages are (page, slide or chapter); or, for
    one its reader refused, why (``refused``: ``path: reason``)."""

    unit: str
    lines: tuple[PageLine, ...]
    refused: str = ""


def kept_lines(
    refs: Sequence[FileRef], documents: Documents, indexes: Sequence[FileIndex]
) -> dict[Path, DocumentLines]:
    """The lines of those of ``refs`` that are at hand without reading them, by path: read
    lately, or current in one of ``indexes``. The others must be read."""
    kept: dict[Path, DocumentLines] = {}
    wanted: list[FileRef] = []
    for ref in refs:
        try:
            read = documents.cached(ref)
        except OSError:
            read = None  # gone since the walk: reading it says so
        if read is None:
            wanted.append(ref)
        else:
            kept[ref.path] = _of_document(read.document)
    for index in indexes:
        if not wanted:
            break
        try:
            current = index.current_files(wanted)
        except Exception as exc:  # the index failing costs a reading, not the answer
            log.warning("files: the index could not give documents' lines: %s", exc)
            continue
        for ref in wanted:
            if ref.path in current:
                kept[ref.path] = _of_index(ref, current[ref.path])
        wanted = [ref for ref in wanted if ref.path not in current]
    return kept


def read_lines(
    sandbox: Sandbox, ref: FileRef, documents: Documents, deadline: float
) -> DocumentLines:
    """``ref``'s lines, read by the document worker by ``deadline`` at the latest."""
    return _of_document(documents.read(sandbox, ref, deadline=deadline).document)


def _of_document(document: Document) -> DocumentLines:
    return DocumentLines(document.unit, tuple(_numbered(document)))


def _numbered(document: Document) -> Iterator[PageLine]:
    for page in document.pages:
        for number, text in enumerate(page.text.splitlines(), start=1):
            yield PageLine(page.number, number, text)


def _of_index(ref: FileRef, indexed: IndexedFile) -> DocumentLines:
    """The lines of the index's chunks (each chunk is whole lines of one page, numbered
    from its ``start_line``; lines only blank between chunks are not kept, nor needed)."""
    if indexed.unreadable:
        return DocumentLines("page", (), refused=f"{ref.display}: {indexed.unreadable}")
    lines = [
        PageLine(chunk.page, chunk.start_line + n, text)
        for chunk in indexed.chunks
        for n, text in enumerate(chunk.text.splitlines())
    ]
    unit = indexed.chunks[0].unit if indexed.chunks else "page"
    return DocumentLines(unit, tuple(lines))
