"""Each person's library as a search index: the same :class:`~local2.files.FileIndex` as
their folders and documents (its own Chroma collection, ``<files.index_collection>-library-
<person>``), over the kept texts, a document's chunks page by page. Whatever the files index
learns (hybrid BM25 and vectors, the best passage as the excerpt) the library gets too."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local2.config import Settings
from local2.documents import Document, Page
from local2.files import Documents, Root, Sandbox
from local2.storage import private_dir

if TYPE_CHECKING:  # the index imports chromadb (seconds): opened on first use
    from local2.files import FileIndex, SearchHit
    from local2.memory import Embedder

LABEL = "library"
# One model loaded per process, whichever library: by embedder and the Ollama it asks (an
# Ollama embedder holds its server's address; another server is another embedder).
_EMBEDDERS: dict[tuple[str, str], Embedder] = {}


class LibraryIndexes:
    """Everyone's library index, opened per person on first use (thread-safe)."""

    def __init__(
        self,
        settings: Settings,
        documents: Documents,
        embedder: Callable[[], Embedder | None] = lambda: None,
    ) -> None:
        self.settings = settings
        self.documents = documents
        self._embedder = embedder
        self._indexes: dict[str, FileIndex] = {}
        self._lock = threading.Lock()

    def _sandbox(self, folder: Path) -> Sandbox:
        text = private_dir(folder / "text").resolve()
        sandbox = Sandbox.of_root(Root(LABEL, text), self.settings)
        sandbox.extensions = frozenset({".txt"})
        return sandbox

    def of(self, key: str, folder: Path) -> FileIndex:
        """The index of the person whose folder is ``folder`` (``key``: its name)."""
        with self._lock:
            found = self._indexes.get(key)
            if found is None:
                from local2.files import FileIndex

                private_dir(folder.parent)
                name = self.settings.files.embedder or self.settings.memory.embedder
                wanted = (str(name), str(self.settings.system.ollama_host or ""))
                shared = self._embedder() or self.any_embedder() or _EMBEDDERS.get(wanted)
                found = self._indexes[key] = FileIndex(
                    self.settings,
                    self._sandbox(folder),
                    embedder=shared,
                    name=f"{self.settings.files.index_collection}-library-{key}",
                    documents=self.documents,
                )
                _EMBEDDERS.setdefault(wanted, found.embedder)
            return found

    def any_embedder(self) -> Embedder | None:
        return next((i.embedder for i in self._indexes.values()), None)

    def add(self, key: str, folder: Path, text_path: Path, doc: Document) -> None:
        """Index one kept text (in place of what the index had of it)."""
        index = self.of(key, folder)
        ref = index.sandbox.admit(index.sandbox.roots[0], text_path)
        if ref is None:
            raise RuntimeError(f"{text_path} is not in the library's folder")
        index.add_document(ref, doc, text_path.read_bytes())

    def remove(self, key: str, folder: Path, text_path: Path) -> None:
        self.of(key, folder).remove_file(text_path.resolve())

    def search(self, key: str, folder: Path, query: str, k: int) -> list[SearchHit]:
        return self.of(key, folder).search(query, k)


def as_document(fmt: str, title: str, pages: tuple[tuple[int, str], ...]) -> Document:
    """The kept text as the index takes a document: its pages, each under its number."""
    formats = ("pdf", "docx", "pptx", "odt", "epub", "html", "text")
    known: Any = fmt if fmt in formats else "text"  # one of the Document's formats
    return Document(
        format=known,
        title=title,
        pages=tuple(Page(number=n, text=text) for n, text in pages),
    )
