"""Each person's library as a search index: the same :class:`~local2.files.FileIndex` as
their folders and documents (its own Chroma collection, ``<files.index_collection>-library-
<person>``), over the kept texts, a document's chunks page by page. Whatever the files index
learns (hybrid BM25 and vectors, the best passage as the excerpt) the library gets too."""

from __future__ import annotations

import logging
import threading
import time
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

log = logging.getLogger(__name__)
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
                # the files index brings Chroma and BM25: 768 modules at import, first search only
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


class IndexQueue:
    """What was kept, indexed in the library's own thread: the run that read it goes on.
    Indexing starts once nothing more was kept for ``quiet_s`` (a run reading page after
    page is not slowed by the indexing of what it read), or at once while someone waits
    in :meth:`settle`."""

    def __init__(self, indexes: LibraryIndexes, quiet_s: float) -> None:
        self.indexes = indexes
        self.quiet_s = quiet_s
        self._queue: list[tuple[str, Path, Path, Document]] = []  # to index, in order
        self._pending = 0
        self._settled = threading.Condition()
        self._worker: threading.Thread | None = None
        self._last = 0.0  # when something was last kept
        self._hurry = 0  # how many wait in settle(): while any does, index now

    def add(self, key: str, folder: Path, text_path: Path, doc: Document) -> None:
        with self._settled:
            self._pending += 1
            self._last = time.monotonic()
            self._queue.append((key, folder, text_path, doc))
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(
                    target=self._run, name="local2-library-index", daemon=True
                )
                self._worker.start()
            self._settled.notify_all()

    def _run(self) -> None:
        while True:
            with self._settled:
                while (
                    not self._hurry and (wait := self._last + self.quiet_s - time.monotonic()) > 0
                ):
                    self._settled.wait(wait)
                if not self._queue:
                    self._worker = None
                    return
                key, folder, text_path, doc = self._queue.pop(0)
            try:
                if text_path.is_file():  # not removed meanwhile
                    self.indexes.add(key, folder, text_path, doc)
            except Exception as exc:  # kept on disk, listed and shown; not found by search
                log.warning("library: could not index %s: %s", text_path.stem, exc)
            finally:
                with self._settled:
                    self._pending -= 1
                    self._settled.notify_all()

    def _quiet_left(self) -> float:
        return self._last + self.quiet_s - time.monotonic()

    def settle(self, timeout_s: float | None = None) -> bool:
        """Wait until everything queued is indexed; False when ``timeout_s`` passed first."""
        with self._settled:
            self._hurry += 1
            self._settled.notify_all()
            try:
                return self._settled.wait_for(lambda: self._pending == 0, timeout_s)
            finally:
                self._hurry -= 1
