"""The search_files index: chunks of every allowed file, embedded into a Chroma collection.

Built by ``local2 index`` and kept up to date incrementally: a file whose size and mtime
are unchanged is skipped without reading, a file whose content hash is unchanged is not
re-embedded, files that disappeared (or left the sandbox) are dropped. Each chunk keeps
its file and line range, so a hit says where to read. Vectors come from an explicit
:mod:`~local2.memory.embeddings` embedder recorded in the collection; changing embedder
or chunking rebuilds the index (it is derived data).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chromadb.errors import NotFoundError

from local2.config import Settings
from local2.errors import SandboxError
from local2.files.sandbox import FileRef, Sandbox
from local2.memory.chroma import chroma_client
from local2.memory.embeddings import Embedder, make_embedder

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]  # (files done, files total, current file)
_PAGE = 1000
_EMBED_BATCH = 64


@dataclass
class Chunk:
    start_line: int
    end_line: int
    text: str


@dataclass
class SearchHit:
    path: str  # display path, e.g. notes/budget.md
    start_line: int
    end_line: int
    similarity: float
    text: str


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


def _file_id(path: Path) -> str:
    return hashlib.sha1(str(path).encode("utf-8")).hexdigest()[:16]


def _embedder_for(settings: Settings, prefer: str | None) -> Embedder:
    choice = settings.files.embedder
    if choice is not None and choice != settings.memory.embedder:
        memory = settings.memory.model_copy(update={"embedder": choice})
        settings = settings.model_copy(update={"memory": memory})
    return make_embedder(settings, prefer=prefer)


class FileIndex:
    """One Chroma collection of file chunks under ``<data_dir>/file_index``."""

    def __init__(
        self,
        settings: Settings,
        sandbox: Sandbox | None = None,
        embedder: Embedder | None = None,
    ):
        self.settings = settings
        self.sandbox = sandbox or Sandbox.from_settings(settings)
        self.path = Path(settings.data_dir) / "file_index"
        self.client = chroma_client(settings, "file_index")  # or the team's Chroma server
        self.name = settings.files.index_collection
        existing = self._existing_metadata()
        self.embedder = embedder or _embedder_for(settings, (existing or {}).get("embedder"))
        self._lock = threading.Lock()
        self.synced_at = 0.0
        if existing is not None and existing != self._wanted_metadata():
            log.info("files: index built with %s; rebuilding", existing)
            self.client.delete_collection(self.name)
        self.collection = self._collection()

    def _wanted_metadata(self) -> dict[str, Any]:
        f = self.settings.files
        return {
            "embedder": self.embedder.name,
            "embedder_scheme": self.embedder.scheme,
            "chunk_lines": f.chunk_lines,
            "chunk_chars": f.chunk_chars,
        }

    def _existing_metadata(self) -> dict[str, Any] | None:
        try:
            found = self.client.get_collection(self.name, embedding_function=None)
        except NotFoundError:
            return None
        return dict(found.metadata or {})

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

    def _indexed(self) -> dict[str, dict[str, Any]]:
        """file_id -> metadata of its first chunk (hash, size, mtime), for every indexed file."""
        out: dict[str, dict[str, Any]] = {}
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
        if rebuild:
            self.client.delete_collection(self.name)
            self.collection = self._collection()
        report = SyncReport()
        indexed = self._indexed()
        refs = list(self.sandbox.walk())
        report.files = len(refs)
        batch = _Batch(self)
        current: set[str] = set()
        for done, ref in enumerate(refs, start=1):
            fid = _file_id(ref.path)
            current.add(fid)
            if progress is not None:
                progress(done - 1, len(refs), ref.display)
            try:
                outcome = self._sync_file(ref, fid, indexed.get(fid), batch)
            except (SandboxError, OSError) as exc:
                report.skipped.append(f"{ref.display}: {exc}")
                if fid in indexed:
                    self.collection.delete(where={"file_id": fid})
                continue
            setattr(report, outcome, getattr(report, outcome) + 1)
        batch.flush()
        gone = [fid for fid in indexed if fid not in current]
        for fid in gone:
            self.collection.delete(where={"file_id": fid})
        report.removed = len(gone)
        report.chunks = self.count()
        report.seconds = round(time.monotonic() - started, 3)
        if progress is not None:
            progress(len(refs), len(refs), "")
        self.synced_at = time.time()
        return report

    def _sync_file(self, ref: FileRef, fid: str, old: dict[str, Any] | None, batch: _Batch) -> str:
        stat = ref.path.stat()
        if old and old.get("size") == stat.st_size and old.get("mtime") == stat.st_mtime:
            return "unchanged"
        text, data = self.sandbox.read_text(ref)
        digest = hashlib.sha256(data).hexdigest()
        if old and old.get("sha256") == digest:
            self.collection.update(
                ids=[f"{fid}-0"], metadatas=[{"size": stat.st_size, "mtime": stat.st_mtime}]
            )
            return "unchanged"
        if old:
            self.collection.delete(where={"file_id": fid})
        f = self.settings.files
        base = {
            "file_id": fid,
            "file": str(ref.path),
            "rel": str(ref.rel),
            "sha256": digest,
            "size": stat.st_size,
            "mtime": stat.st_mtime,
        }
        for n, chunk in enumerate(chunk_text(text, f.chunk_lines, f.chunk_chars)):
            meta = {**base, "chunk": n, "start_line": chunk.start_line, "end_line": chunk.end_line}
            batch.add(f"{fid}-{n}", f"{ref.rel}\n{chunk.text}", chunk.text, meta)
        return "updated" if old else "added"

    def ensure_fresh(self, max_age_s: float = 30.0) -> SyncReport | None:
        """Sync unless that was done in the last ``max_age_s`` seconds (cheap when unchanged)."""
        if time.time() - self.synced_at < max_age_s:
            return None
        return self.sync()

    # -- searching -------------------------------------------------------------------------

    def search(self, query: str, k: int = 5) -> list[SearchHit]:
        """The ``k`` chunks most similar to ``query``, from files the sandbox still allows."""
        total = self.count()
        if not query.strip() or k <= 0 or total == 0:
            return []
        result = self.collection.query(
            query_embeddings=[self.embedder.embed_query(query)],
            n_results=min(total, k * 3),
            include=["documents", "metadatas", "distances"],
        )
        hits: list[SearchHit] = []
        for doc, meta, dist in _rows(result):
            ref = self._still_allowed(str(meta.get("file", "")))
            if ref is None or float(dist) >= 1.0:  # gone, or nothing in common with the query
                continue
            hits.append(
                SearchHit(
                    path=ref.display,
                    start_line=int(meta["start_line"]),
                    end_line=int(meta["end_line"]),
                    similarity=round(1.0 - float(dist), 4),
                    text=doc or "",
                )
            )
            if len(hits) >= k:
                break
        return hits

    def _still_allowed(self, file: str) -> FileRef | None:
        path = Path(file)
        for root in self.sandbox.roots:
            if path.is_relative_to(root.path):
                return self.sandbox.admit(root, path)
        return None


def _rows(result: Any) -> Iterator[tuple[str, dict[str, Any], float]]:
    docs = (result.get("documents") or [[]])[0]
    metas = (result.get("metadatas") or [[]])[0]
    dists = (result.get("distances") or [[]])[0]
    yield from zip(docs, metas, dists, strict=True)


class _Batch:
    """Chunks waiting to be embedded together (MiniLM is much faster in batches)."""

    def __init__(self, index: FileIndex):
        self.index = index
        self.items: list[tuple[str, str, str, dict[str, Any]]] = []

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
        self.items = []
