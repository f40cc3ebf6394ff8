"""The library of what was read: every source kept once by its content, with its readings.

:meth:`ReadingLibrary.keep` files a :class:`Fetched` under its content's hash: new,
its text (and a document's original file) is written and indexed; known, the reading is
added to the entry (one reading per run or chat session). Over ``library.max_mb`` the
oldest unpinned entries, by when last read, are evicted. :meth:`remove` takes an entry out
of the index and off the disk. Everything is per person (:class:`Shelf`): nothing one person
kept can be listed, read or searched for anyone else.

Not to be confused with :class:`local2.files.Library`, a person's own *uploaded* documents.

The kept (:class:`Fetched`): what a read leaves to keep, the source as it was read, and who read it.

Made by ``web_fetch`` when a fetch succeeds (a refused or failed fetch makes none) and by an
import; the library files it under its content's hash, so a page read twice is one entry
with two readings.

The shelf (:class:`Shelf`): each person's library on disk, one folder of theirs, readable
by the server's user only.

    <base>/<person>/entries/<id>.json      what the entry is, its readings (0600)
    <base>/<person>/text/<id>.txt          its text as read, a document's pages marked
    <base>/<person>/originals/<id>/<name>  a document's original file

``<base>`` is ``library.dir`` or ``<data_dir>/library``; ``<person>`` is the folder name of
:func:`local2.memory.owner_folder` (``local``, or a key ending in a hash), as for documents.
Nothing here knows another person's folder: an id not among theirs is unknown, whoever's.

The index (:class:`LibraryIndexes`): each person's library as a search index, the same
:class:`~local2.files.FileIndex` as their folders and documents (its own Chroma collection,
``<files.index_collection>-library-<person>``), over the kept texts, a document's chunks
page by page. Whatever the files index learns (hybrid BM25 and vectors, the best passage as
the excerpt) the library gets too.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from local2.config import Settings
from local2.contracts import Keep, LibraryEntry, LibraryHit, LibraryPage, Reading
from local2.documents import Document, Page, page_sections
from local2.errors import UnknownLibraryEntry
from local2.files import Documents, Root, Sandbox
from local2.memory import owner_folder
from local2.storage import private_dir, write_private, write_private_bytes

if TYPE_CHECKING:  # the index imports chromadb (seconds): opened on first use
    from local2.files import FileIndex, SearchHit
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


PAGE_MARK = "[Page {n}]"  # how a kept text marks its pages (documents.page_sections reads it)


@dataclass(frozen=True)
class Fetched:
    """One source as it was read: its text page by page, and a document's original file."""

    url: str  # as asked for
    final_url: str  # after redirects
    title: str
    format: str  # html, text, pdf, docx, pptx, odt, epub
    pages: tuple[tuple[int, str], ...]  # (page, text); a web page is page 1
    original: bytes | None = None  # a document's file as downloaded
    content_type: str = ""

    @property
    def text(self) -> str:
        """The whole text, a document's pages each under its marker."""
        if len(self.pages) == 1 and self.original is None:
            return self.pages[0][1]
        return "\n\n".join(f"{PAGE_MARK.format(n=n)}\n{text}" for n, text in self.pages)

    @property
    def sha256(self) -> str:
        """The content's hash: a document's file, a page's text (markup that changes on
        every load, a date or an ad, does not make a new entry)."""
        data = self.original if self.original is not None else self.text.encode("utf-8")
        return hashlib.sha256(data).hexdigest()

    @property
    def site(self) -> str:
        try:
            return urlsplit(self.url).hostname or ""
        except ValueError:
            return ""


@dataclass(frozen=True)
class Reader:
    """Who read it: a research run (``run_id``) or a chat turn (``session_id`` and the
    turn's ``query_id``)."""

    by: str  # research | chat | import
    run_id: str | None = None
    session_id: str | None = None
    owner: str | None = None
    cited: tuple[int, ...] = field(default=())
    query_id: str | None = None


def entry_id(owner_key: str, sha256: str) -> str:
    """The entry's id: the same content is the same entry (per person: ids never tell one
    person's library from another's)."""
    return "lib-" + hashlib.sha256(f"{owner_key}\n{sha256}".encode()).hexdigest()[:12]


ID = re.compile(r"^lib-[0-9a-f]{12}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


def is_entry_id(value: object) -> bool:
    return isinstance(value, str) and ID.fullmatch(value) is not None


def original_name(url: str, fmt: str) -> str:
    """A safe file name for a document's original, from its URL, ending in its format."""
    base = url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    stem = _UNSAFE.sub("_", base).strip(" ._")[:80] or "document"
    suffix = f".{fmt}"
    return stem if stem.lower().endswith(suffix) else f"{Path(stem).stem or stem}{suffix}"


class Shelf:
    """One person's entries, text and originals (no index: :mod:`._store` keeps it beside)."""

    def __init__(self, base: Path, owner: str | None) -> None:
        self.owner = owner
        self.key = owner_folder(owner)
        self.folder = base / self.key

    def record_path(self, entry_id: str) -> Path:
        return self.folder / "entries" / f"{entry_id}.json"

    def text_path(self, entry_id: str) -> Path:
        return self.folder / "text" / f"{entry_id}.txt"

    def original_path(self, entry: LibraryEntry) -> Path | None:
        if not entry["original"]:
            return None
        return self.folder / "originals" / entry["id"] / entry["original"]

    def entries(self) -> list[LibraryEntry]:
        """The person's entries, the last read first."""
        found = []
        for path in (self.folder / "entries").glob("lib-*.json"):
            with suppress(OSError, ValueError):
                found.append(cast(LibraryEntry, json.loads(path.read_text(encoding="utf-8"))))
        found.sort(key=lambda e: (-e["last_read"], e["id"]))
        return found

    def find(self, entry_id: str) -> LibraryEntry | None:
        path = self.record_path(entry_id)
        if not is_entry_id(entry_id) or not path.is_file():
            return None
        return cast(LibraryEntry, json.loads(path.read_text(encoding="utf-8")))

    def get(self, entry_id: str) -> LibraryEntry:
        """The entry ``entry_id`` of this person's; :class:`UnknownLibraryEntry` for any other."""
        found = self.find(entry_id)
        if found is None:
            raise UnknownLibraryEntry(
                f"No entry '{entry_id}' in your library.",
                "List yours with `local2 library list` or GET /library.",
            )
        return found

    def save(self, entry: LibraryEntry) -> None:
        private_dir(self.folder.parent)
        private_dir(self.folder)
        write_private(self.record_path(entry["id"]), json.dumps(entry, ensure_ascii=False))

    def write_text(self, entry_id: str, text: str) -> Path:
        private_dir(self.folder)
        return write_private(self.text_path(entry_id), text)

    def write_original(self, entry: LibraryEntry, data: bytes) -> None:
        path = self.original_path(entry)
        if path is not None:
            private_dir(self.folder)
            private_dir(path.parent.parent)
            write_private_bytes(path, data)

    def read_text(self, entry_id: str) -> str:
        try:
            return self.text_path(entry_id).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def drop(self, entry_id: str) -> None:
        """Remove the entry's record, text and original from disk."""
        self.record_path(entry_id).unlink(missing_ok=True)
        self.text_path(entry_id).unlink(missing_ok=True)
        shutil.rmtree(self.folder / "originals" / entry_id, ignore_errors=True)


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
