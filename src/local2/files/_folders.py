"""What the file tools see for one person: the configured folders (``files.roots``), and
that person's own documents as one more folder, ``my-documents/`` (:mod:`._own_documents`).

One :class:`Folders` per agent (``services.files``): it opens the folders' index on first
use, reads documents through one cache (:mod:`._reading`), and gives each tool call the
view of the person whose turn it is (:meth:`Folders.view`): someone else's documents are
never in it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from local2.config import Settings
from local2.files._own_documents import OwnDocuments
from local2.files._reading import DocumentReader, Documents
from local2.files._sandbox import Sandbox

if TYPE_CHECKING:
    from local2.files._index import FileIndex
    from local2.files._own_documents import OwnDocuments
    from local2.memory import Embedder


@dataclass(frozen=True)
class FileView:
    """One person's files: the sandbox over the folders and their documents, and the
    indexes to search (the folders', their documents')."""

    sandbox: Sandbox
    indexes: tuple[FileIndex, ...]
    folders: FileIndex | None  # the configured folders' index (brought up to date first)


class Folders:
    """The configured folders and everyone's own documents, for the file tools."""

    def __init__(
        self,
        settings: Settings,
        sandbox: Sandbox | None = None,
        index: FileIndex | None = None,
        reader: DocumentReader | None = None,
    ) -> None:
        self.settings = settings
        self.sandbox = sandbox or Sandbox.from_settings(settings)
        self.documents = Documents(settings.documents, reader)
        self._index = index
        self._lock = threading.Lock()
        self.own_documents: OwnDocuments | None = None
        if settings.documents.own:
            self.own_documents = OwnDocuments(settings, self.documents, self._embedder)

    @property
    def configured(self) -> bool:
        """Whether any configured folder exists (else only people's own documents)."""
        return bool(self.sandbox.roots)

    @property
    def index(self) -> FileIndex:
        """The configured folders' index (opened on first use)."""
        with self._lock:
            if self._index is None:
                # _index brings Chroma and BM25: 768 modules at import, only on the first search
                from local2.files._index import FileIndex

                shared = (
                    self.own_documents.any_embedder() if self.own_documents is not None else None
                )
                self._index = FileIndex(
                    self.settings, self.sandbox, embedder=shared, documents=self.documents
                )
            return self._index

    def _embedder(self) -> Embedder | None:
        return self._index.embedder if self._index is not None else None

    def view(self, owner: str | None) -> FileView:
        """What ``owner``'s tool calls may read and search."""
        folders = self.index if self.configured else None
        if self.own_documents is None:
            return FileView(self.sandbox, (folders,) if folders else (), folders)
        own = self.own_documents.root(owner)
        indexes = [folders] if folders else []
        if own is not None:
            indexes.append(self.own_documents.index(owner))
        return FileView(self.sandbox.with_root(own), tuple(indexes), folders)
