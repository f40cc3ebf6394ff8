"""The library of what was read: every source kept once by its content, with its readings.

:meth:`ReadingLibrary.keep` files a :class:`~._kept.Fetched` under its content's hash: new,
its text (and a document's original file) is written and indexed; known, the reading is
added to the entry (one reading per run or chat session). Over ``library.max_mb`` the
oldest unpinned entries, by when last read, are evicted. :meth:`remove` takes an entry out
of the index and off the disk. Everything is per person (:mod:`._shelf`): nothing one person
kept can be listed, read or searched for anyone else.

Not to be confused with :class:`local2.files.Library`, a person's own *uploaded* documents.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from local2.config import Settings
from local2.contracts import Keep, LibraryEntry, LibraryHit, LibraryPage, Reading
from local2.documents import page_sections
from local2.files import Documents
from local2.library._index import IndexQueue, LibraryIndexes, as_document
from local2.library._kept import Fetched, Reader, entry_id
from local2.library._shelf import Shelf, original_name

if TYPE_CHECKING:
    from local2.files import SearchHit as IndexHit
    from local2.memory import Embedder

log = logging.getLogger(__name__)
FOLDER = "library"  # under the data directory
_MB = 1024 * 1024
_SHARED: dict[tuple[str, str], ReadingLibrary] = {}
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


@dataclass
class _Folder:
    """What every library over one folder shares in a process: the lock its entries are
    written under, each person's bytes, the runs' own keep, who is told of what goes."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    used: dict[str, int] = field(default_factory=dict)
    run_keep: dict[str, Keep] = field(default_factory=dict)
    forgotten: list[Callable[[str | None], None]] = field(default_factory=list)


_FOLDERS: dict[str, _Folder] = {}


def _folder(base: Path) -> _Folder:
    with _SHARED_LOCK:
        return _FOLDERS.setdefault(str(base.resolve()), _Folder())


def _shape(settings: Settings) -> str:
    """The settings a library is made of: the library section, its index and embedder."""
    return json.dumps(
        [
            settings.library.model_dump(mode="json"),
            settings.files.embedder,
            settings.memory.embedder,
            settings.files.index_collection,
            str(settings.system.ollama_host or ""),
        ],
        default=str,
    )


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
        folder = _folder(self.base)  # what every library over this folder shares
        self._lock = folder.lock
        # Runs started with their own library.keep (``off``: keep nothing), by run id.
        self.run_keep: dict[str, Keep] = folder.run_keep
        self._used = folder.used  # each person's bytes kept, once counted
        # Told the owner whenever an entry of theirs goes (removed, evicted): what holds a
        # copy of their library (the app's export) lets it go too.
        self.forgotten: list[Callable[[str | None], None]] = folder.forgotten
        self.pending = IndexQueue(self.indexes, QUIET_S)  # what was kept, to be indexed

    @classmethod
    def shared(cls, settings: Settings) -> ReadingLibrary:
        """The process's one library over ``settings``' folder and for settings like these
        (what it keeps, its cap, its index and embedder: another such setting is another
        library, over the same entries, locks and counts), for web_fetch's keeper, the tools
        and the service alike."""
        probe = cls(settings)
        key = (str(probe.base.resolve()), _shape(settings))
        with _SHARED_LOCK:
            return _SHARED.setdefault(key, probe)

    def keep_mode(self, run_id: str | None) -> Keep:
        """What a run (or a chat session: the setting) keeps."""
        return self.run_keep.get(run_id or "", self.cfg.keep)

    def settle(self, timeout_s: float | None = None) -> bool:
        """Wait until what was kept is indexed (at once when nothing is pending); False
        when ``timeout_s`` passed first."""
        return self.pending.settle(timeout_s)

    def shelf(self, owner: str | None) -> Shelf:
        return Shelf(self.base, owner)

    # -- keeping ---------------------------------------------------------------------------

    def keep(
        self, fetched: Fetched, reader: Reader, spare: frozenset[str] = frozenset()
    ) -> LibraryEntry:
        """File ``fetched`` in ``reader.owner``'s library (new, or a reading more of the
        entry with the same content); then make room within ``library.max_mb``, never by
        evicting the entries ``spare`` names (an import's own)."""
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
                doc = as_document(entry["format"], entry["title"], fetched.pages)
                self.pending.add(shelf.key, shelf.folder, shelf.text_path(eid), doc)
            self._make_room(shelf, keep=spare | {eid})
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
        return self._cited(owner, lambda r: r["run_id"] == run_id, wanted)

    def cite_turn(self, owner: str | None, session_id: str, query_id: str, urls: list[str]) -> int:
        """Record a chat turn's citations: each entry the turn read whose URL its answer
        names (``urls``, in the answer's order) gets its place among them; how many."""
        places = {u: [n] for n, u in enumerate(dict.fromkeys(map(url_key, urls)), start=1)}
        turn = ("chat", None, session_id, query_id)
        return self._cited(owner, lambda r: reader_key(r) == turn, places)

    def _cited(
        self, owner: str | None, by: Callable[[Reading], bool], wanted: dict[str, list[int]]
    ) -> int:
        """The numbers ``wanted`` by URL, on the reading ``by`` picks of each entry read."""
        shelf, touched = self.shelf(owner), 0
        with self._lock:
            for entry in shelf.entries():
                numbers = wanted.get(url_key(entry["url"])) or wanted.get(
                    url_key(entry["final_url"])
                )
                reading = next((r for r in entry["readings"] if by(r)), None)
                if not numbers or reading is None or reading["cited"] == numbers:
                    continue
                reading["cited"] = numbers
                entry["cited"] = sum(1 for r in entry["readings"] if r["cited"])
                shelf.save(entry)
                touched += 1
        return touched

    def _make_room(self, shelf: Shelf, keep: frozenset[str]) -> list[str]:
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
            if entry["pinned"] or entry["id"] in keep:
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
        """The person's entries, the last read first: as kept on disk, not waiting for the
        indexing of what was just kept (a search waits for it)."""
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
        for tell in self.forgotten:
            try:
                tell(shelf.owner)
            except Exception as exc:  # the entry is gone; a copy elsewhere may linger
                log.warning("library: could not drop a copy of %s: %s", eid, exc)

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


def reader_key(reading: Reading) -> tuple[str | None, ...]:
    """Who read it: the run, or the chat session and turn."""
    return (reading["by"], reading["run_id"], reading["session_id"], reading.get("query_id"))


def add_reading(entry: LibraryEntry, reader: Reader) -> None:
    """One reading per run or chat turn: a second read by the same one is the same."""
    now = time.time()
    entry["last_read"] = now
    fresh: Reading = {
        "at": now,
        "by": reader.by,  # type: ignore[typeddict-item]  # research | chat | import
        "run_id": reader.run_id,
        "session_id": reader.session_id,
        "cited": list(reader.cited),
    }
    if reader.query_id is not None:
        fresh["query_id"] = reader.query_id
    for reading in entry["readings"]:
        if reader_key(reading) == reader_key(fresh) and reader.by != "import":
            reading["at"] = now
            return
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
