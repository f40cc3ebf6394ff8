"""Each person's own documents: kept under the data directory, indexed in their own index.

    <data_dir>/documents/<person>/files/<name>        the documents (0600, folders 0700)
    <data_dir>/documents/<person>/records/<id>.json  what each is, and its sessions

(``documents.own_dir`` moves ``<data_dir>/documents``: several server processes share one.)

``<person>`` is ``local`` or a key of the name and its full SHA-256
(:func:`local2.memory.owner_folder`), and each person's chunks are a Chroma collection of
their own (``<files.index_collection>-own-<person>``) beside the folders' index: nothing
one person added can be listed, read or searched for anyone else, and an id that is not
among theirs is :class:`~local2.errors.UnknownDocument` whoever's it is.

A document is read (by the document worker, within ``documents.yaml``'s limits) before
anything is stored, then written, indexed and recorded; whatever fails on the way, what
was written is removed, so a refused or failed upload leaves nothing half-stored. The file
tools see a person's documents as one more folder, ``my-documents/`` (:mod:`._folders`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, cast

from local2.config import Settings
from local2.contracts import DocumentHit, DocumentRecord
from local2.documents import declared_format, read_document
from local2.errors import DocumentTooLarge, UnknownDocument
from local2.files._reading import Documents
from local2.files._sandbox import DOCUMENT_SUFFIXES, Root, Sandbox, file_id
from local2.ids import is_document_id, new_document_id
from local2.memory import owner_folder
from local2.storage import claim_private, private_dir, write_private, write_private_bytes

if TYPE_CHECKING:  # the index imports chromadb (seconds): when a person's is first opened
    from local2.documents import Document
    from local2.files._index import FileIndex
    from local2.memory import Embedder

log = logging.getLogger(__name__)

FOLDER = "documents"  # under the data directory
LABEL = "my-documents"  # the folder the file tools show a person's documents in
OWN_EXTENSIONS = (*sorted(DOCUMENT_SUFFIXES), ".txt", ".md")
_EXTENSION = {"pdf": ".pdf", "docx": ".docx", "pptx": ".pptx", "odt": ".odt", "epub": ".epub"}
_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]+")
_MB = 1024 * 1024


def safe_name(name: str, fmt: str) -> str:
    """A file name for an upload: its last part, no control or path characters, not hidden,
    at most 120 characters, ending in its format's extension."""
    base = _UNSAFE.sub("_", PurePath(name.replace("\\", "/")).name).strip(" .") or "document"
    stem, suffix = Path(base).stem[:100].strip(" .") or "document", Path(base).suffix.lower()
    if declared_format(f"x{suffix}") != fmt or suffix not in OWN_EXTENSIONS:
        suffix = _EXTENSION.get(fmt, ".html" if fmt == "html" else ".txt")
    return f"{stem}{suffix}"


class OwnDocuments:
    """Everyone's own documents (opened per person on first use; thread-safe)."""

    def __init__(
        self,
        settings: Settings,
        documents: Documents,
        embedder: Callable[[], Embedder | None] = lambda: None,
    ) -> None:
        self.settings = settings
        self.cfg = settings.documents
        self.documents = documents
        self.base = Path(self.cfg.own_dir or Path(settings.data_dir) / FOLDER).expanduser()
        self._embedder = embedder  # the folders' index's, when it is open: one model loaded
        self._indexes: dict[str, FileIndex] = {}
        self._lock = threading.Lock()
        # Each person's records as last read, by their folder's modification time: a turn
        # asks for a session's attachments, and nothing changed since is not read again.
        self._records: dict[Path, tuple[int, list[DocumentRecord]]] = {}

    # -- where ----------------------------------------------------------------------------

    def folder(self, owner: str | None) -> Path:
        return self.base / owner_folder(owner)

    def root(self, owner: str | None) -> Root | None:
        """The person's documents as a folder of the file tools (None: they have none)."""
        files = self.folder(owner) / "files"
        return Root(LABEL, files.resolve()) if files.is_dir() else None

    def sandbox(self, owner: str | None) -> Sandbox:
        root = self.root(owner) or Root(LABEL, (self.folder(owner) / "files").resolve())
        sandbox = Sandbox.of_root(root, self.settings)
        sandbox.extensions = frozenset(OWN_EXTENSIONS)
        return sandbox

    def index(self, owner: str | None) -> FileIndex:
        """The person's own index (a Chroma collection of theirs, opened on first use)."""
        key = owner_folder(owner)
        with self._lock:
            found = self._indexes.get(key)
            if found is None:
                # _index brings Chroma and BM25: 768 modules at import, only on the first search
                from local2.files._index import FileIndex

                found = self._indexes[key] = FileIndex(
                    self.settings,
                    self.sandbox(owner),
                    embedder=self._shared_embedder(),
                    name=f"{self.settings.files.index_collection}-own-{key}",
                    documents=self.documents,
                )
            return found

    def _shared_embedder(self) -> Embedder | None:
        return self._embedder() or self.any_embedder()

    def any_embedder(self) -> Embedder | None:
        """The embedder a person's index opened already has (one model loaded, not two)."""
        return next((i.embedder for i in self._indexes.values()), None)

    # -- records --------------------------------------------------------------------------

    def records(self, owner: str | None) -> list[DocumentRecord]:
        """The person's documents, newest first."""
        folder = self.folder(owner) / "records"
        try:
            changed = folder.stat().st_mtime_ns  # a record written or removed changes it
        except FileNotFoundError:
            return []
        cached = self._records.get(folder)
        if cached is not None and cached[0] == changed:
            return copy.deepcopy(cached[1])
        found = []
        for path in folder.glob("doc-*.json"):
            with suppress(OSError, ValueError):
                found.append(cast(DocumentRecord, json.loads(path.read_text(encoding="utf-8"))))
        found.sort(key=lambda r: (-r["added_at"], r["id"]))
        self._records[folder] = (changed, found)
        return copy.deepcopy(found)

    def get(self, owner: str | None, doc_id: str) -> DocumentRecord:
        """The person's document ``doc_id``; :class:`UnknownDocument` for any other id."""
        path = self.folder(owner) / "records" / f"{doc_id}.json"
        if not is_document_id(doc_id) or not path.is_file():
            raise UnknownDocument(
                f"No document '{doc_id}' among yours.", "List yours with GET /documents."
            )
        return cast(DocumentRecord, json.loads(path.read_text(encoding="utf-8")))

    def _save(self, owner: str | None, record: DocumentRecord) -> None:
        path = self.folder(owner) / "records" / f"{record['id']}.json"
        write_private(path, json.dumps(record, ensure_ascii=False, indent=1))

    # -- adding, attaching, removing ------------------------------------------------------

    def add(
        self, owner: str | None, name: str, data: bytes, session_id: str | None = None
    ) -> DocumentRecord:
        """Read, keep and index a document of ``owner``'s (attached to ``session_id``, when
        given); a document that cannot be read, or over a limit, is refused and nothing of
        it stays. The session id's owner is the caller's to have checked."""

        self._check_room(owner, len(data))
        document = read_document(data, self.cfg, name=name)
        private_dir(private_dir(self.base) / owner_folder(owner))
        path = claim_private(self.folder(owner) / "files", safe_name(name, document.format))
        record_path = None
        try:
            write_private_bytes(path, data)
            index = self.index(owner)
            ref = index.sandbox.admit(index.sandbox.roots[0], path)
            if ref is None:
                raise RuntimeError(f"{path.name} is not a file the file tools may read")
            self.documents.remember(ref, document, data)
            index.add_document(ref, document, data)
            record = self._record(document, ref.display, path, data, session_id)
            record_path = self.folder(owner) / "records" / f"{record['id']}.json"
            self._save(owner, record)
        except BaseException:
            self._forget(owner, path, record_path)
            raise
        return record

    def _record(
        self, document: Document, shown: str, path: Path, data: bytes, session_id: str | None
    ) -> DocumentRecord:
        return {
            "id": new_document_id(),
            "name": path.name,
            "path": shown,
            "format": document.format,
            "title": document.title,
            "pages": document.page_count,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "added_at": time.time(),
            "sessions": [session_id] if session_id else [],
            "no_text_pages": list(document.no_text_pages),
            "notes": list(document.notes),
        }

    def _check_room(self, owner: str | None, size: int) -> None:
        if size > self.cfg.max_bytes:
            raise DocumentTooLarge(
                f"The file is {size / _MB:,.1f} MB, over the limit of "
                f"{self.cfg.max_bytes / _MB:,.1f} MB (documents.max_bytes).",
                "too_large",
                fix="Split it, or raise documents.max_bytes in documents.yaml.",
            )
        kept = self.records(owner)
        if len(kept) >= self.cfg.own_max_documents:
            raise DocumentTooLarge(
                f"You keep {len(kept)} documents, the most one person may "
                f"(documents.own_max_documents).",
                "too_large",
                fix="Remove some you no longer need (local2 documents remove, DELETE "
                "/documents/{id}), or raise documents.own_max_documents.",
            )
        used = sum(r["bytes"] for r in kept)
        if used + size > self.cfg.own_max_mb * _MB:
            raise DocumentTooLarge(
                f"This file would bring your documents to {(used + size) / _MB:,.1f} MB, over "
                f"the {self.cfg.own_max_mb:,} MB one person may keep (documents.own_max_mb).",
                "too_large",
                fix="Remove some documents you no longer need, or raise documents.own_max_mb.",
            )

    def _forget(self, owner: str | None, path: Path, record_path: Path | None) -> None:
        """Remove what an add or a removal had written of a document (best effort)."""
        if record_path is not None:
            record_path.unlink(missing_ok=True)
        try:
            self.index(owner).remove_file(path.resolve())
        except Exception as exc:  # the file goes anyway; its chunks are dropped next sync
            log.warning("documents: could not drop the index's chunks of %s: %s", path, exc)
        path.unlink(missing_ok=True)

    def remove(self, owner: str | None, doc_id: str) -> DocumentRecord:
        """Remove the person's document ``doc_id``: its file, its chunks, its record."""
        record = self.get(owner, doc_id)
        record_path = self.folder(owner) / "records" / f"{doc_id}.json"
        self._forget(owner, self.folder(owner) / "files" / record["name"], record_path)
        return record

    def attach(self, owner: str | None, doc_id: str, session_id: str) -> DocumentRecord:
        """Attach the person's document to one of their sessions (checked by the caller):
        it is searched for each question of that session."""
        with self._lock:
            record = self.get(owner, doc_id)
            if session_id not in record["sessions"]:
                record["sessions"].append(session_id)
                self._save(owner, record)
        return record

    def attached(self, owner: str | None, session_id: str | None) -> list[DocumentRecord]:
        """The person's documents attached to ``session_id``."""
        if not session_id:
            return []
        return [r for r in self.records(owner) if session_id in r["sessions"]]

    # -- searching ------------------------------------------------------------------------

    def passages(
        self, owner: str | None, session_id: str | None, question: str
    ) -> list[DocumentHit]:
        """The passages of the session's attached documents most like ``question``
        (``documents.attached_k``, within ``attached_chars``), best first: the hits
        ``local2 search --in documents`` finds, in its order. A chunk longer than the room
        left (a paragraph on one long line is one chunk) is given by its best passage for
        the question, never dropped for a worse one that fits."""
        attached = self.attached(owner, session_id)
        if not attached or not question.strip():
            return []
        folder = self.folder(owner) / "files"
        by_file = {file_id((folder / r["name"]).resolve()): r for r in attached}
        hits = self.index(owner).search(question, self.cfg.attached_k, files=set(by_file))
        found: list[DocumentHit] = []
        room = self.cfg.attached_chars
        for hit in hits:
            record = by_file.get(hit.file_id)
            if record is None:
                continue
            text = hit.text if len(hit.text) <= room else hit.passage
            if len(text) > room:
                break  # no room even for its passage: the ones after it are worse
            room -= len(text)
            found.append(
                {
                    "document_id": record["id"],
                    "file": hit.path,
                    "page": hit.page,
                    "unit": hit.unit,
                    "score": hit.similarity,
                    "text": text,
                    "passage": hit.passage,
                    "found_by": hit.found_by(),
                }
            )
        return found
