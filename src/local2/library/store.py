"""The library of what was read: every source kept once by its content, with its readings.

:meth:`ReadingLibrary.keep` files a :class:`~.kept.Fetched` under its content's hash: new,
its text (and a document's original file) is written and indexed; known, the reading is
added to the entry (one reading per run or chat session). Over ``library.max_mb`` the
oldest unpinned entries, by when last read, are evicted. :meth:`remove` takes an entry out
of the index and off the disk. Everything is per person (:mod:`.shelf`): nothing one person
kept can be listed, read or searched for anyone else.

Not to be confused with :class:`local2.files.Library`, a person's own *uploaded* documents.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from local2.config import Settings
from local2.contracts import Keep, LibraryEntry, LibraryHit, LibraryPage, Reading
from local2.documents import Document, page_sections
from local2.files import Documents
from local2.library.index import LibraryIndexes, as_document
from local2.library.kept import Fetched, Reader, entry_id
from local2.library.shelf import Shelf, original_name

if TYPE_CHECKING:
    from local2.files import SearchHit as IndexHit
    from local2.memory import Embedder

log = logging.getLogger(__name__)
FOLDER = "library"  # under the data directory
_MB = 1024 * 1024
_SHARED: dict[str, ReadingLibrary] = {}
_SHARED_LOCK = threading.Lock()
QUIET_S = 2.0  # what was kept is indexed once nothing more was kept for this long


def url_key(url: str) -> str:
    """A URL without its fragment (``#page=N``) or a final '/', lower-case scheme and host."""
    base = url.strip().split("#", 1)[0].rstrip("/")
    scheme, sep, rest = base.partition("://")
    if not sep:
        return base
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}"


class ReadingLibrary:
    """Everyone's library of what was read (opened per person on first use; thread-safe)."""

    def __init__(
        self,
        settings: Settings,
        documents: Documents | None = None,
        embedder: Callable[[], Embedder | None] = lambda: None,
    ) -> None:
        self.settings = settings
        self.cfg = settings.library
        self.base = Path(self.cfg.dir or Path(settings.data_dir) / FOLDER).expanduser()
        self.indexes = LibraryIndexes(
            settings, documents or Documents(settings.documents), embedder
        )
        self._lock = threading.RLock()
        # Runs started with their own library.keep (``off``: keep nothing), by run id.
        self.run_keep: dict[str, Keep] = {}
        self._queue: list[tuple[Shelf, str, Document]] = []  # to index, in order
        self._pending = 0
        self._settled = threading.Condition()
        self._worker: threading.Thread | None = None
        self._used: dict[str, int] = {}  # each person's bytes kept, once counted
        self._last_keep = 0.0
        self._hurry = 0  # how many wait in settle(): while any does, index now

    @classmethod
    def shared(cls, settings: Settings) -> ReadingLibrary:
        """The process's one library over ``settings``' folder (one index open per person),
        for web_fetch's keeper, the tools and the service alike."""
        probe = cls(settings)
        with _SHARED_LOCK:
            return _SHARED.setdefault(str(probe.base.resolve()), probe)

    def keep_mode(self, run_id: str | None) -> Keep:
        """What a run (or a chat session: the setting) keeps."""
        return self.run_keep.get(run_id or "", self.cfg.keep)

    # -- indexing, beside the run -----------------------------------------------------------

    def _index_later(self, shelf: Shelf, eid: str, doc: Document) -> None:
        """Index a kept text in the library's own thread: the run that read it goes on."""
        with self._settled:
            self._pending += 1
            self._last_keep = time.monotonic()
            self._queue.append((shelf, eid, doc))
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(
                    target=self._index_pending, name="local2-library-index", daemon=True
                )
                self._worker.start()
            self._settled.notify_all()

    def _index_pending(self) -> None:
        while True:
            with self._settled:
                # Quiet first: a run reading page after page is not slowed by the indexing
                # of what it read (settle() asks for it at once).
                while (
                    not self._hurry and (wait := self._last_keep + QUIET_S - time.monotonic()) > 0
                ):
                    self._settled.wait(wait)
                if not self._queue:
                    self._worker = None
                    return
                shelf, eid, doc = self._queue.pop(0)
            try:
                if shelf.text_path(eid).is_file():  # not removed meanwhile
                    self.indexes.add(shelf.key, shelf.folder, shelf.text_path(eid), doc)
            except Exception as exc:  # kept on disk, listed and shown; not found by search
                log.warning("library: could not index %s: %s", eid, exc)
            finally:
                with self._settled:
                    self._pending -= 1
                    self._settled.notify_all()

    def settle(self, timeout_s: float | None = None) -> bool:
        """Wait until what was kept is indexed (at once when nothing is pending); False
        when ``timeout_s`` passed first."""
        with self._settled:
            self._hurry += 1
            self._settled.notify_all()
            try:
                return self._settled.wait_for(lambda: self._pending == 0, timeout_s)
            finally:
                self._hurry -= 1

    def shelf(self, owner: str | None) -> Shelf:
        return Shelf(self.base, owner)

    # -- keeping ---------------------------------------------------------------------------

    def keep(self, fetched: Fetched, reader: Reader) -> LibraryEntry:
        """File ``fetched`` in ``reader.owner``'s library (new, or a reading more of the
        entry with the same content); then make room within ``library.max_mb``."""
        shelf = self.shelf(reader.owner)
        digest = fetched.sha256
        eid = entry_id(shelf.key, digest)
        with self._lock:
            entry = shelf.find(eid)
            fresh = entry is None
            if entry is None:
                entry = self._new(shelf, eid, fetched, digest)
            add_reading(entry, reader)
            shelf.save(entry)
            if fresh:
                if shelf.key in self._used:
                    self._used[shelf.key] += entry["bytes"]
                self._index_later(
                    shelf, eid, as_document(entry["format"], entry["title"], fetched.pages)
                )
            self._make_room(shelf, keep=eid)
        return entry

    def _new(self, shelf: Shelf, eid: str, fetched: Fetched, digest: str) -> LibraryEntry:
        now = time.time()
        fmt = fetched.format
        entry: LibraryEntry = {
            "id": eid,
            "url": fetched.url,
            "final_url": fetched.final_url or fetched.url,
            "title": fetched.title or fetched.site or fetched.url,
            "site": fetched.site,
            "format": fmt,
            "sha256": digest,
            "pages": len(fetched.pages),
            "chars": sum(len(t) for _, t in fetched.pages),
            "bytes": 0,
            "original": original_name(fetched.url, fmt) if fetched.original else None,
            "first_read": now,
            "last_read": now,
            "pinned": False,
            "readings": [],
            "cited": 0,
        }
        try:
            text_path = shelf.write_text(eid, fetched.text)
            if fetched.original is not None:
                shelf.write_original(entry, fetched.original)
            entry["bytes"] = text_path.stat().st_size + len(fetched.original or b"")
        except BaseException:
            self._forget(shelf, eid)
            raise
        return entry

    def read_again(self, owner: str | None, eid: str, reader: Reader) -> LibraryEntry:
        """A reading of the kept copy (research from the library): no new text, a reading."""
        shelf = self.shelf(owner)
        with self._lock:
            entry = shelf.get(eid)
            add_reading(entry, reader)
            shelf.save(entry)
        return entry

    def pages_of(self, owner: str | None, eid: str) -> tuple[tuple[int, str], ...]:
        """The entry's kept text page by page (a web page: one page)."""
        entry = self.get(owner, eid)
        text = self.shelf(owner).read_text(eid)
        pages = tuple(page_sections(text)) if entry["pages"] > 1 else ()
        return pages or ((1, text),)

    def cite(self, owner: str | None, run_id: str, cited: dict[str, list[int]]) -> int:
        """Record a run's citations (``url -> [n, ...]``) on the entries it read; how many
        entries were cited."""
        wanted = {url_key(u): sorted(set(ns)) for u, ns in cited.items() if ns}
        shelf, touched = self.shelf(owner), 0
        with self._lock:
            for entry in shelf.entries():
                numbers = wanted.get(url_key(entry["url"])) or wanted.get(
                    url_key(entry["final_url"])
                )
                reading = next((r for r in entry["readings"] if r["run_id"] == run_id), None)
                if not numbers or reading is None or reading["cited"] == numbers:
                    continue
                reading["cited"] = numbers
                entry["cited"] = sum(1 for r in entry["readings"] if r["cited"])
                shelf.save(entry)
                touched += 1
        return touched

    def _make_room(self, shelf: Shelf, keep: str) -> list[str]:
        """Evict the oldest unpinned entries (by when last read) while over ``max_mb``."""
        used = self._used.get(shelf.key)
        if used is not None and used <= self.cfg.max_mb * _MB:
            return []  # the usual case: no entry read to find out
        entries = shelf.entries()
        used = self._used[shelf.key] = sum(e["bytes"] for e in entries)
        evicted: list[str] = []
        for entry in sorted(entries, key=lambda e: e["last_read"]):
            if used <= self.cfg.max_mb * _MB:
                break
            if entry["pinned"] or entry["id"] == keep:
                continue
            self._forget(shelf, entry["id"])
            used -= entry["bytes"]
            evicted.append(entry["id"])
        self._used[shelf.key] = used
        if evicted:
            log.info("library: evicted %d entries over library.max_mb", len(evicted))
        return evicted

    # -- reading, pinning, removing --------------------------------------------------------

    def entries(self, owner: str | None) -> list[LibraryEntry]:
        self.settle()
        return self.shelf(owner).entries()

    def get(self, owner: str | None, eid: str) -> LibraryEntry:
        return self.shelf(owner).get(eid)

    def page(self, owner: str | None, eid: str, page: int | None = None) -> LibraryPage:
        """The entry's kept text: all of it, or page ``page`` of a document."""
        shelf = self.shelf(owner)
        entry = shelf.get(eid)
        text = shelf.read_text(eid)
        if page is not None:
            pages = dict(page_sections(text)) or {1: text}
            text = pages.get(page, "")
        return {"entry": entry, "page": page, "text": text}

    def original(self, owner: str | None, eid: str) -> Path | None:
        """The entry's original file (a document's), or None."""
        shelf = self.shelf(owner)
        path = shelf.original_path(shelf.get(eid))
        return path if path is not None and path.is_file() else None

    def pin(self, owner: str | None, eid: str, pinned: bool = True) -> LibraryEntry:
        shelf = self.shelf(owner)
        with self._lock:
            entry = shelf.get(eid)
            entry["pinned"] = pinned
            shelf.save(entry)
        return entry

    def remove(self, owner: str | None, eid: str) -> LibraryEntry:
        """Take the entry out of the index and off the disk."""
        shelf = self.shelf(owner)
        with self._lock:
            entry = shelf.get(eid)
            self._forget(shelf, eid)
            self._used.pop(shelf.key, None)  # counted again when next needed
        return entry

    def _forget(self, shelf: Shelf, eid: str) -> None:
        self.settle()  # an index add still pending would bring its chunks back
        try:
            self.indexes.remove(shelf.key, shelf.folder, shelf.text_path(eid))
        except Exception as exc:  # the files go anyway
            log.warning("library: could not drop the index's chunks of %s: %s", eid, exc)
        shelf.drop(eid)

    def by_url(self, owner: str | None, url: str) -> LibraryEntry | None:
        """The entry last read at ``url`` (its fragment aside), or None."""
        key = url_key(url)
        return next(
            (e for e in self.entries(owner) if key in (url_key(e["url"]), url_key(e["final_url"]))),
            None,
        )

    # -- searching -------------------------------------------------------------------------

    def search(self, owner: str | None, query: str, k: int | None = None) -> list[LibraryHit]:
        """The passages of the person's library most like ``query``, best first."""
        shelf = self.shelf(owner)
        if not (shelf.folder / "entries").is_dir() or not query.strip():
            return []
        self.settle()
        found = self.indexes.search(shelf.key, shelf.folder, query, k or self.cfg.search_k)
        hits: list[LibraryHit] = []
        for hit in found:
            entry = shelf.find(Path(hit.path).stem)
            if entry is None:
                continue
            hits.append(library_hit(entry, hit))
        return hits


def add_reading(entry: LibraryEntry, reader: Reader) -> None:
    """One reading per run or chat session: a second read by the same one is the same."""
    now = time.time()
    entry["last_read"] = now
    for reading in entry["readings"]:
        if (reading["run_id"], reading["session_id"], reading["by"]) == (
            reader.run_id,
            reader.session_id,
            reader.by,
        ) and reader.by != "import":
            reading["at"] = now
            return
    fresh: Reading = {
        "at": now,
        "by": reader.by,  # type: ignore[typeddict-item]  # research | chat | import
        "run_id": reader.run_id,
        "session_id": reader.session_id,
        "cited": list(reader.cited),
    }
    entry["readings"].append(fresh)


def library_hit(entry: LibraryEntry, hit: IndexHit) -> LibraryHit:
    """A hit of the library's index as the shared search hit: the entry's original URL (at
    its page), the passage that answers, why it was found, and when and by which runs read."""
    page = hit.page
    runs = [r["run_id"] for r in entry["readings"] if r["run_id"]]
    url = (
        entry["url"] if not page or entry["pages"] <= 1 else f"{url_key(entry['url'])}#page={page}"
    )
    return {
        "source": "library",
        "path": url,
        "page": page if entry["pages"] > 1 else None,
        "score": hit.score,
        "passage": hit.passage or hit.text,
        "why": {
            "bm25_rank": hit.bm25_rank,
            "vector_rank": hit.vector_rank,
            "linked_rank": hit.linked_rank,
            "linked_from": None,  # the library's texts are named by entry, never by title
            "reranked": False,
        },
        "entry_id": entry["id"],
        "title": entry["title"],
        "read_at": entry["last_read"],
        "runs": runs,
    }
