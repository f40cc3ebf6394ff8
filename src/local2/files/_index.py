"""The search_files index: chunks of every allowed file, embedded into a Chroma collection.

Built by ``local2 index`` and kept up to date incrementally: a file whose size and mtime
are unchanged is skipped without reading, a file whose content hash is unchanged is not
re-embedded, files that disappeared (or left the sandbox) are dropped. Each chunk keeps
its file and line range, so a hit says where to read; a document's chunks (PDF, DOCX, ...,
read by the document worker: :mod:`local2.files._reading`) are cut page by page and keep
their page, so a hit names the file and the page. A file with no text, or a document its
reader refuses, keeps one empty marker chunk, so it is not read again until it changes.
Vectors come from an explicit :mod:`~local2.memory._embedders` embedder recorded in the
collection; changing embedder or chunking rebuilds the index (it is derived data).

A search need not wait for a long build (a folder of 500 PDFs): :meth:`FileIndex.refresh`
brings the index up to date in a thread of its own, waits a while, and otherwise lets the
search go on over what is indexed so far, saying how far the build has got. Each step of a
build (opening, a file, the end) is one native call (Chroma's C++ index, the embedder): a
command that exits while a build goes on in its daemon thread waits for the step in flight,
and the build stops before the next (:mod:`local2.native_calls`), never inside C++ code that
would abort the process.

The chunks keep a document's text as read, so ``grep_files`` takes a document's lines from
here while its entry is current (:meth:`FileIndex.current_files`) instead of reading the
document again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chromadb.errors import NotFoundError

import local2.files._hybrid as hybrid
from local2.config import Settings
from local2.errors import SandboxError
from local2.files._hybrid import SearchHit
from local2.files._lexical import Lexical, chunk_row, reconcile
from local2.files._lexical_store import open_terms
from local2.files._reading import Documents
from local2.files._sandbox import UNREADABLE, FileRef, Sandbox, file_id
from local2.memory import Embedder, chroma_client, make_embedder
from local2.native_calls import native_call

if TYPE_CHECKING:
    from local2.documents import Document

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]  # (files done, files total, current file)
_PAGE = 1000
_EMBED_BATCH = 64
# BM25 over a folder's chunks (up to chunk_chars each): Robertson's usual values, measured
# on a folder of notes by bench/folder_search.py.
FILES_K1, FILES_B = 1.2, 0.75


@dataclass
class Chunk:
    start_line: int
    end_line: int
    text: str
    page: int = 0  # a document's page (slide, chapter); 0: a text file's
    unit: str = "page"  # what the document's pages are: page, slide or chapter


@dataclass
class IndexedFile:
    """What the index keeps of a file as it is now: its chunks in order (a document's page
    by page), or why its reader refused it (``unreadable``)."""

    chunks: list[Chunk]
    unreadable: str = ""


@dataclass
class SyncReport:
    files: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)  # display path: reason
    chunks: int = 0
    seconds: float = 0.0
    embedder: str = ""  # the embedding model the chunks were embedded with


def chunk_text(text: str, max_lines: int, max_chars: int) -> list[Chunk]:
    """Split into chunks of whole lines, preferring blank lines (paragraph ends) as cuts."""
    chunks: list[Chunk] = []
    lines: list[str] = []
    start = 1
    size = 0

    def flush(next_start: int) -> None:
        nonlocal lines, start, size
        body = "".join(lines)
        if body.strip():
            chunks.append(Chunk(start, start + len(lines) - 1, body))
        lines, start, size = [], next_start, 0

    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if lines and (len(lines) >= max_lines or size + len(line) > max_chars):
            flush(number)
        lines.append(line)
        size += len(line)
        if not line.strip() and len(lines) >= max(2, max_lines // 2):
            flush(number + 1)
    flush(0)
    return chunks


def document_chunks(document: Document, max_lines: int, max_chars: int) -> list[Chunk]:
    """A document's chunks, page by page: none straddles a page, each keeps its page."""
    chunks = []
    for page in document.pages:
        for chunk in chunk_text(page.text, max_lines, max_chars):
            chunk.page, chunk.unit = page.number, document.unit
            chunks.append(chunk)
    return chunks


def _embedder_for(settings: Settings, prefer: str | None) -> Embedder:
    choice = settings.files.embedder
    if choice is not None and choice != settings.memory.embedder:
        memory = settings.memory.model_copy(update={"embedder": choice})
        settings = settings.model_copy(update={"memory": memory})
    return make_embedder(settings, prefer=prefer)


class FileIndex:
    """One Chroma collection of file chunks under ``<data_dir>/file_index`` (``name``:
    another collection there, e.g. a person's own documents')."""

    def __init__(
        self,
        settings: Settings,
        sandbox: Sandbox | None = None,
        embedder: Embedder | None = None,
        name: str | None = None,
        documents: Documents | None = None,
    ):
        self.settings = settings
        self.sandbox = sandbox or Sandbox.from_settings(settings)
        self.documents = documents or Documents(settings.documents)
        self.path = Path(settings.data_dir) / "file_index"
        self.client = chroma_client(settings, "file_index")  # or the team's Chroma server
        self.name = name or settings.files.index_collection
        existing = self._existing_metadata()
        self.embedder = embedder or _embedder_for(settings, (existing or {}).get("embedder"))
        self._lock = threading.Lock()
        self.synced_at = 0.0
        self.progress = (0, 0)  # the running (or last) sync's files done, of how many
        self._builder: threading.Thread | None = None
        self._builder_lock = threading.Lock()
        self._failure: BaseException | None = None
        if existing is not None and _without_mark(existing) != self._wanted_metadata():
            log.info("files: index built with %s; rebuilding", existing)
            self.client.delete_collection(self.name)
        self.collection = self._collection()
        # The BM25 side's terms: beside an embedded index, else on the server beside it.
        self.terms = open_terms(self.client, self.name, None if _on_server(settings) else self.path)
        self._bound = self.terms.bind(str(self.collection.id))  # False: fill it from the chunks
        self.lexical = Lexical(self.terms, k1=FILES_K1, b=FILES_B)
        self.link_notes = settings.files.link_notes  # a note's name is a link (Obsidian's)

    def _wanted_metadata(self) -> dict[str, Any]:  # the collection's Chroma metadata
        f = self.settings.files
        return {
            "embedder": self.embedder.name,
            "embedder_scheme": self.embedder.scheme,
            "chunk_lines": f.chunk_lines,
            "chunk_chars": f.chunk_chars,
        }

    # the collection's Chroma metadata, as Chroma kept it
    def _existing_metadata(self) -> dict[str, Any] | None:
        try:
            found = self.client.get_collection(self.name, embedding_function=None)
        except NotFoundError:
            return None
        return dict(found.metadata or {})

    def _remove(self, file_ids: Collection[str]) -> None:
        """Drop the chunks of ``file_ids``, and their terms."""
        for page in _pages(file_ids):
            self.collection.delete(where={"file_id": {"$in": page}})
        self.terms.drop(file_ids)

    # each file's first chunk's Chroma metadata, by file id
    def _reconcile(self, indexed: dict[str, dict[str, Any]]) -> None:
        """The terms kept made to match the chunks (:func:`._lexical.reconcile`)."""
        reconcile(self.collection, self.terms, indexed)
        self._bound = True

    def _collection(self) -> Any:
        return self.client.get_or_create_collection(
            self.name,
            configuration={"hnsw": {"space": "cosine"}},
            metadata=self._wanted_metadata(),
            embedding_function=None,  # never Chroma's downloading default embedder
        )

    # -- building --------------------------------------------------------------------------

    def count(self) -> int:
        return int(self.collection.count())

    def _indexed(self) -> dict[str, dict[str, Any]]:  # each file's first chunk's Chroma metadata
        """file_id -> metadata of its first chunk (hash, size, mtime), for every indexed file."""
        out: dict[str, dict[str, Any]] = {}  # file_id -> its first chunk's Chroma metadata
        offset = 0
        while True:
            page = self.collection.get(
                where={"chunk": 0}, limit=_PAGE, offset=offset, include=["metadatas"]
            )
            if not page["ids"]:
                return out
            for meta in page["metadatas"] or []:
                out[str(meta["file_id"])] = dict(meta)
            offset += len(page["ids"])

    def sync(self, rebuild: bool = False, progress: Progress | None = None) -> SyncReport:
        """Bring the index up to date with the allowed files; ``rebuild`` starts from empty."""
        with self._lock:
            return self._sync(rebuild, progress)

    def _sync(self, rebuild: bool, progress: Progress | None) -> SyncReport:
        started = time.monotonic()
        with native_call():
            if rebuild:
                self.client.delete_collection(self.name)
                self.collection = self._collection()
                self.terms.bind(str(self.collection.id))
                self.lexical.reset()
            report = SyncReport(embedder=self.embedder.name)
            indexed = self._indexed()
            self._reconcile(indexed)
            refs = list(self.sandbox.walk())
        report.files = len(refs)
        batch = _Batch(self)
        current: set[str] = set()
        for done, ref in enumerate(refs, start=1):
            fid = file_id(ref.path)
            current.add(fid)
            self.progress = (done - 1, len(refs))
            if progress is not None:
                progress(done - 1, len(refs), ref.display)
            with native_call():
                outcome = _sync_or_skip(self, ref, fid, indexed, batch, report)
            if outcome is not None:
                setattr(report, outcome, getattr(report, outcome) + 1)
        with native_call():
            batch.flush()
            gone = [fid for fid in indexed if fid not in current]
            self._remove(gone)
            report.removed = len(gone)
            if report.added or report.updated or report.removed:
                self.lexical.prepare()  # the BM25 index built once, here, not at the next start
            report.chunks = self.count()
        report.seconds = round(time.monotonic() - started, 3)
        self.progress = (len(refs), len(refs))
        if progress is not None:
            progress(len(refs), len(refs), "")
        self.synced_at = time.time()
        return report

    def _sync_file(
        self,
        ref: FileRef,
        fid: str,
        old: dict[str, Any] | None,  # its first chunk's Chroma metadata, as indexed
        batch: _Batch,
        report: SyncReport,
    ) -> str:
        stat = ref.path.stat()
        if old and old.get("size") == stat.st_size and _same_time(old, stat):
            if old.get("unreadable"):
                report.skipped.append(f"{ref.display}: {old['unreadable']}")
            return "unchanged"
        data = self.sandbox.read_bytes(ref)
        digest = hashlib.sha256(data).hexdigest()
        if old and old.get("sha256") == digest:
            times = {"size": stat.st_size, "mtime": stat.st_mtime, "mtime_ns": stat.st_mtime_ns}
            self.collection.update(ids=[f"{fid}-0"], metadatas=[times])
            if old.get("unreadable"):
                report.skipped.append(f"{ref.display}: {old['unreadable']}")
            return "unchanged"
        base = _file_meta(ref, fid, digest, stat)
        try:
            chunks = self._chunks(ref, data)
        except SandboxError as exc:
            if not str(exc).startswith(f"{UNREADABLE}:"):
                raise
            base["unreadable"] = str(exc).removeprefix(f"{UNREADABLE}: {ref.display}: ")[:500]
            report.skipped.append(f"{ref.display}: {base['unreadable']}")
            chunks = []
        if old:
            self._remove({fid})
        self.add_chunks(ref, fid, chunks, base, batch)
        return "updated" if old else "added"

    def add_document(self, ref: FileRef, document: Document, data: bytes) -> int:
        """Index one document read already (an upload, read before it was stored), in
        place of what the index had of its file; its number of chunks."""
        f = self.settings.files
        chunks = document_chunks(document, f.chunk_lines, f.chunk_chars)
        fid = file_id(ref.path)
        base = _file_meta(ref, fid, hashlib.sha256(data).hexdigest(), ref.path.stat())
        with self._lock:
            self._remove({fid})
            batch = _Batch(self)
            self.add_chunks(ref, fid, chunks, base, batch)
            batch.flush()
        return len(chunks)

    def current_files(self, refs: Sequence[FileRef]) -> dict[Path, IndexedFile]:
        """What the index keeps of those of ``refs`` whose entry is current (by path): the
        file's size and modification time are the ones indexed, and all its chunks are
        written. One Chroma read for them all."""
        mine = {
            file_id(ref.path): ref
            for ref in refs
            if any(ref.path.is_relative_to(root.path) for root in self.sandbox.roots)
        }
        if not mine:
            return {}
        found = self.collection.get(
            where={"file_id": {"$in": sorted(mine)}}, include=["documents", "metadatas"]
        )
        rows = _by_file(found)
        kept = {ref.path: _current(ref, rows.get(fid, [])) for fid, ref in mine.items()}
        return {path: indexed for path, indexed in kept.items() if indexed is not None}

    def remove_file(self, path: Path) -> None:
        """Drop what the index has of the file at ``path``."""
        with self._lock:
            self._remove({file_id(path)})

    def _chunks(self, ref: FileRef, data: bytes) -> list[Chunk]:
        """The file's chunks: a document's page by page, a text file's by lines."""
        f = self.settings.files
        if self.sandbox.is_document(ref):
            document = self.documents.read(self.sandbox, ref, data).document
            return document_chunks(document, f.chunk_lines, f.chunk_chars)
        return chunk_text(self.sandbox.decode(ref, data), f.chunk_lines, f.chunk_chars)

    def add_chunks(
        self,
        ref: FileRef,
        fid: str,
        chunks: list[Chunk],
        base: dict[str, Any],  # the Chroma metadata every chunk of the file carries
        batch: _Batch,
    ) -> None:
        """Queue ``chunks`` of ``ref`` for embedding; none: an empty marker, so the file is
        not read again until it changes."""
        base = {**base, "chunks": len(chunks)}  # how many: a reader can tell it is all there
        for n, chunk in enumerate(chunks):
            where = f" ({chunk.unit} {chunk.page})" if chunk.page else ""
            meta = {
                **base,
                "chunk": n,
                "page": chunk.page,
                "unit": chunk.unit,
                "start_line": chunk.start_line,
                "end_line": chunk.end_line,
            }
            batch.add(f"{fid}-{n}", f"{ref.rel}{where}\n{chunk.text}", chunk.text, meta)
        if not chunks:
            meta = {**base, "chunk": 0, "page": 0, "start_line": 0, "end_line": 0}
            batch.add(f"{fid}-0", str(ref.rel), "", meta)

    def refresh(self, wait_s: float, max_age_s: float = 30.0) -> bool:
        """Bring the index up to date in a thread of its own (one at a time), waiting at most
        ``wait_s``: True when it is (synced in the last ``max_age_s`` seconds), False while
        the build goes on (:attr:`progress` says how far). What the build raised, it raises
        here, once."""
        if time.time() - self.synced_at < max_age_s:
            return True
        with self._builder_lock:
            if self._builder is None or not self._builder.is_alive():
                self._builder = threading.Thread(
                    target=self._build, name="local2-file-index", daemon=True
                )
                self._builder.start()
            builder = self._builder
        builder.join(wait_s)
        if builder.is_alive():
            return False
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure
        return True

    def _build(self) -> None:
        try:
            self.sync()
        except BaseException as exc:  # kept for refresh() to raise in the caller's thread
            self._failure = exc

    # -- searching -------------------------------------------------------------------------

    def search(
        self, query: str, k: int = 5, files: Collection[str] | None = None
    ) -> list[SearchHit]:
        """The ``k`` best chunks for ``query``, BM25 and vectors fused (:mod:`._hybrid`),
        from files the sandbox still allows (``files``: only these file ids)."""
        if not query.strip() or k <= 0 or self.count() == 0 or (files is not None and not files):
            return []
        if not self._bound:  # an index of before: its terms are read from its chunks, once
            self._reconcile(self._indexed())
        self.lexical.refresh()
        linking = hybrid.LINKING if self.link_notes else 0
        return hybrid.search(
            self.collection, self.embedder, self.lexical, self._display, query, k, files, linking
        )

    def _display(self, file: str) -> str | None:
        """How a hit names an indexed file (None: gone, or no longer allowed)."""
        ref = self._still_allowed(file)
        return None if ref is None else ref.display

    def _still_allowed(self, file: str) -> FileRef | None:
        path = Path(file)
        for root in self.sandbox.roots:
            if path.is_relative_to(root.path):
                return self.sandbox.admit(root, path)
        return None


def _sync_or_skip(
    index: FileIndex,
    ref: FileRef,
    fid: str,
    indexed: dict[str, dict[str, Any]],  # each file's first chunk's Chroma metadata, by id
    batch: _Batch,
    report: SyncReport,
) -> str | None:
    """One file of a build: what became of it (the report's counter), or None: skipped
    (unreadable, or gone from the sandbox), its old chunks dropped."""
    try:
        return index._sync_file(ref, fid, indexed.get(fid), batch, report)
    except (SandboxError, OSError) as exc:
        report.skipped.append(f"{ref.display}: {exc}")
        if fid in indexed:
            index._remove({fid})
        return None


# the Chroma metadata every chunk of the file carries
def _file_meta(ref: FileRef, fid: str, digest: str, stat: os.stat_result) -> dict[str, Any]:
    """What every chunk of a file carries: which file, and what it was when read."""
    return {
        "file_id": fid,
        "file": str(ref.path),
        "rel": str(ref.rel),
        "sha256": digest,
        "size": stat.st_size,
        "mtime": stat.st_mtime,
        "mtime_ns": stat.st_mtime_ns,  # exact: Chroma keeps floats to ~7 digits only
    }


# a Chroma read's (text, metadata), by file
def _by_file(found: Any) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """A Chroma read's chunks (text, metadata), by their file's id."""
    rows: dict[str, list[tuple[str, dict[str, Any]]]] = {}  # (text, Chroma metadata), by file
    for text, meta in zip(found["documents"] or [], found["metadatas"] or [], strict=True):
        rows.setdefault(str(meta.get("file_id")), []).append((text or "", dict(meta)))
    return rows


# rows: the file's chunks in the index, (text, Chroma metadata)
def _current(ref: FileRef, rows: list[tuple[str, dict[str, Any]]]) -> IndexedFile | None:
    """The file's chunks from its ``rows`` in the index, if they are the file as it is now
    and all there (None: not indexed, changed since, or being written by a sync)."""
    rows = sorted(rows, key=lambda row: int(row[1].get("chunk") or 0))
    if not rows:
        return None
    first, stat = rows[0][1], ref.path.stat()
    if first.get("size") != stat.st_size or not _same_time(first, stat):
        return None
    written = first.get("chunks")  # absent from an index of before: written whole
    if written is not None and len(rows) != max(1, int(written)):
        return None
    if first.get("unreadable"):
        return IndexedFile([], str(first["unreadable"]))
    chunks = [
        Chunk(
            int(meta["start_line"]),
            int(meta["end_line"]),
            text,
            int(meta.get("page") or 0),
            str(meta.get("unit") or "page"),
        )
        for text, meta in rows
        if text
    ]
    return IndexedFile(chunks)


# its first chunk's Chroma metadata, as indexed
def _same_time(old: dict[str, Any], stat: os.stat_result) -> bool:
    """Whether the file's modification time is the one indexed: to the nanosecond when the
    index has it so, else (an index of before) as Chroma kept the float."""
    if "mtime_ns" in old:
        return bool(old["mtime_ns"] == stat.st_mtime_ns)
    return bool(old.get("mtime") == stat.st_mtime)


def _without_mark(metadata: dict[str, Any]) -> dict[str, Any]:  # a collection's Chroma metadata
    """A collection's metadata without the mark an index of before wrote at every sync."""
    return {key: value for key, value in metadata.items() if key != "lexical"}


def _on_server(settings: Settings) -> bool:
    return bool(settings.memory.chroma_url)


def _pages(file_ids: Collection[str]) -> list[list[str]]:
    ids = sorted(file_ids)
    return [ids[start : start + _PAGE] for start in range(0, len(ids), _PAGE)]


class _Batch:
    """Chunks waiting to be embedded together (MiniLM is much faster in batches)."""

    def __init__(self, index: FileIndex):
        self.index = index
        # (id, text to embed, document, Chroma metadata)
        self.items: list[tuple[str, str, str, dict[str, Any]]] = []

    # meta: the chunk's Chroma metadata
    def add(self, cid: str, embed_text: str, document: str, meta: dict[str, Any]) -> None:
        self.items.append((cid, embed_text, document, meta))
        if len(self.items) >= _EMBED_BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.items:
            return
        ids, texts, docs, metas = zip(*self.items, strict=True)
        vectors = self.index.embedder.embed_documents(list(texts))
        self.index.collection.add(
            ids=list(ids), embeddings=vectors, documents=list(docs), metadatas=list(metas)
        )
        # Searched by their words as soon as by their vectors, a build still going or not.
        rows = {cid: chunk_row(doc, meta) for cid, _, doc, meta in self.items if doc}
        self.index.terms.put(rows)
        self.items = []
