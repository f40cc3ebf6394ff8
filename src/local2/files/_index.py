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

Hybrid search over a file index: BM25 and vectors, fused by reciprocal rank, and the
notes the best hits link to.

Each side ranks its best ``CANDIDATES`` chunks (vectors: Chroma's nearest by cosine; BM25:
:mod:`._lexical`, over the same chunks), and :func:`local2.retrieval.fuse` makes one ranking
of them. Then the ``LINKING`` best hits' links are followed: the files they name by title
("Felix Kelsorby" names ``Felix Kelsorby.md``, as a note's name is a link in a folder of
notes) make a third ranking, fused with the two. A question about "the actor who played
X" finds the page about X by its words, and the actor's own page through the name X's page
gives: measured on held-out multi-hop questions, it is what lifts all-gold-in-the-top-5
(``bench/folder_search.py``). Each hit keeps its rank on each side (why it was found), its
cosine similarity (read for a chunk only BM25 or a link found) and its best passage for the
query (:func:`local2.retrieval.best_passage`: the sentences that answer, not the chunk's
first lines).

The BM25 side of a file index: every chunk's terms, kept beside its vectors.

Each chunk's terms are written as the chunk is, to a store beside the index
(:func:`open_terms`: a SQLite file beside an embedded index, a side collection on the
team's Chroma server), so a chunk an unfinished build has written is searched by its words
as by its vector, and a process's first search reads the terms back without tokenising
anything, and the BM25 index a sync built and kept, where the store keeps one. After that,
each search asks the store whether anything changed (one query) and reads again only the
files another process, or this one, wrote or removed since (:meth:`Lexical.refresh`); the
BM25 index is built again from the kept terms at the next search after a change (bm25s
computes every score as it indexes, and BM25's weights depend on every chunk: 80 ms for
2,700 chunks), or at the end of a sync (:meth:`Lexical.prepare`), and kept.

Where the BM25 side of a file index is kept: every chunk's terms, written as the chunk is,
read back at a process's first search without tokenising anything again.

Two places, one interface (:class:`Terms`), chosen by where the index lives:

- an embedded index (``<data_dir>/file_index``): a SQLite file beside Chroma's,
  ``<collection>.terms.sqlite3``; every write is logged with a sequence number, so a
  process sees which files another process changed (``changes``) and re-reads only those;
- the team's Chroma server (no folder every process can read): a collection beside the
  index's, ``<collection>.terms``, one record per chunk (its file, its terms and the
  write's sequence number as metadata; a one-number stand-in vector, which nothing
  queries). The sequence number is the side collection's own metadata.

Measured for 1,000 notes (2,692 chunks; ``bench/lexical_start.py``): reading every chunk's
text from an embedded Chroma took 146 ms and tokenising it 170 ms; the terms read back
take 15 ms from SQLite, 44 ms from an embedded side collection, 144 ms from the chunks'
own Chroma metadata (which Chroma stores and indexes key by key). On a server, the side
collection's terms as metadata are written in half the time they take as documents
(which the server indexes for full-text search: 2.2-2.6 s against 4.1-4.8 s for the 2,692)
and read back alike (about 150 ms). Each store knows which Chroma collection it
holds the terms of (:meth:`Terms.bind`): a collection built again starts an empty one.

Beside an embedded index, the BM25 index built from the terms at a version is kept too
(:meth:`Terms.kept_index`: bm25s' own files, ``<collection>.terms.bm25/``), so a process
that starts at that version reads it (13-47 ms) instead of building it (80-500 ms for
2,692 chunks, by load). On a server each process builds its own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Protocol

from chromadb.errors import NotFoundError

from local2.config import Settings
from local2.errors import SandboxError
from local2.files._reading import Documents
from local2.files._sandbox import UNREADABLE, FileRef, Sandbox, file_id
from local2.memory import Embedder, chroma_client, make_embedder
from local2.native_calls import native_call
from local2.retrieval import Bm25, Fused, best_passage, fuse, terms
from local2.storage import SqliteSql

if TYPE_CHECKING:
    from local2.documents import Document


_TERMS_PAGE = 500  # ids per statement or Chroma read
KEEP_CHANGES = 20_000  # the log's length; a process further behind reads everything again


@dataclass(frozen=True)
class Row:
    """A chunk as the BM25 side keeps it: its file (id, path, path in its folder), its place
    in the file and its terms (:func:`local2.files._index.chunk_terms`)."""

    file_id: str
    file: str
    rel: str
    chunk: int
    terms: tuple[str, ...]


Rows = dict[str, Row]  # chunk id -> row


class Terms(Protocol):
    """A store of chunks' terms (``version``: an opaque token that changes with every write)."""

    def bind(self, collection_id: str) -> bool:
        """Whether the store holds the terms of the collection ``collection_id``; if not, it
        is emptied and holds that one's from now on (to be filled from its chunks)."""
        ...

    def version(self) -> object: ...

    def load(self) -> tuple[Rows, object]:
        """Every chunk's row, and the version they are at."""
        ...

    def since(
        self, version: object, held: Mapping[str, Row]
    ) -> tuple[set[str], Rows, object] | None:
        """What changed after ``version`` (``held``: the rows read then): the files written or
        removed, all their rows now, and the version now; None: too far behind, load all."""
        ...

    def put(self, rows: Mapping[str, Row]) -> None: ...

    def drop(self, file_ids: Collection[str]) -> None: ...

    def counts(self) -> dict[str, int]:
        """Each file's number of chunks kept."""
        ...

    def kept_index(self, version: object) -> Path | None:
        """Where the BM25 index of the rows at ``version`` may be kept, built once for every
        process that starts at it (None: nowhere)."""
        ...


def open_terms(client: Any, name: str, folder: Path | None) -> Terms:
    """The store for collection ``name``: in ``folder`` (an embedded index's), else on the
    Chroma server ``client`` talks to."""
    if folder is not None:
        return SqliteTerms(folder / f"{name}.terms.sqlite3")
    return ChromaTerms(client, f"{name}.terms")


def _terms_pages(items: Iterable[str]) -> list[list[str]]:
    listed = sorted(set(items))
    return [listed[start : start + _TERMS_PAGE] for start in range(0, len(listed), _TERMS_PAGE)]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    cid TEXT PRIMARY KEY, file_id TEXT NOT NULL, file TEXT NOT NULL, rel TEXT NOT NULL,
    chunk INTEGER NOT NULL, terms TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks (file_id);
CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, file_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS about (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_COLUMNS = "cid, file_id, file, rel, chunk, terms"


def _row(found: tuple[Any, ...]) -> tuple[str, Row]:
    cid, file_id, file, rel, chunk, terms = found
    return cid, Row(file_id, file, rel, int(chunk), tuple(terms.split()))


class SqliteTerms(SqliteSql):
    """The terms of an embedded index, in a SQLite file beside it (the house's SQLite
    connection: WAL, so a search reads while a build writes, in this process or another)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, _SCHEMA)
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR IGNORE INTO about VALUES ('token', ?)", (uuid.uuid4().hex,)
            )
        self.indexes = path.with_name(path.name.removesuffix(".sqlite3") + ".bm25")

    def _about(self, key: str) -> str | None:
        found = self._conn.execute("SELECT value FROM about WHERE key = ?", (key,)).fetchone()
        return None if found is None else str(found[0])

    def bind(self, collection_id: str) -> bool:
        with self._lock, self._conn:
            if self._about("collection") == collection_id:
                return True
            self._conn.execute("DELETE FROM chunks")
            self._conn.execute("DELETE FROM changes")
            self._conn.execute("INSERT INTO changes (file_id) VALUES ('')")  # a new version
            self._conn.execute(
                "INSERT OR REPLACE INTO about VALUES ('collection', ?)", (collection_id,)
            )
            self._conn.execute(
                "INSERT OR REPLACE INTO about VALUES ('token', ?)", (uuid.uuid4().hex,)
            )
            # A process that read before reads all again.
            self._conn.execute("INSERT OR REPLACE INTO about VALUES ('pruned', ?)", (self._seq(),))
            return False

    def _seq(self) -> int:
        found = self._conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'")
        row = found.fetchone()
        return int(row[0]) if row else 0

    def version(self) -> int:
        with self._lock:
            return self._seq()

    def load(self) -> tuple[Rows, int]:
        with self._lock, self._conn:  # one read transaction: the rows are those of the version
            self._conn.execute("BEGIN")
            seq = self._seq()
            found = self._conn.execute(f"SELECT {_COLUMNS} FROM chunks").fetchall()
        return dict(_row(r) for r in found), seq

    def since(self, version: object, held: Mapping[str, Row]) -> tuple[set[str], Rows, int] | None:
        with self._lock, self._conn:
            self._conn.execute("BEGIN")
            if not isinstance(version, int) or version < int(self._about("pruned") or 0):
                return None
            seq = self._seq()
            changed = self._conn.execute(
                "SELECT DISTINCT file_id FROM changes WHERE seq > ?", (version,)
            ).fetchall()
            fids = {str(r[0]) for r in changed}
            rows: Rows = {}
            for page in _terms_pages(fids):
                marks = ",".join("?" * len(page))
                found = self._conn.execute(
                    f"SELECT {_COLUMNS} FROM chunks WHERE file_id IN ({marks})", page
                )
                rows.update(_row(r) for r in found)
        return fids, rows, seq

    def put(self, rows: Mapping[str, Row]) -> None:
        if not rows:
            return
        values = [
            (c, r.file_id, r.file, r.rel, r.chunk, " ".join(r.terms)) for c, r in rows.items()
        ]
        with self._lock, self._conn:
            self._conn.executemany(
                f"INSERT OR REPLACE INTO chunks ({_COLUMNS}) VALUES (?,?,?,?,?,?)", values
            )
            self._log({r.file_id for r in rows.values()})

    def drop(self, file_ids: Collection[str]) -> None:
        if not file_ids:
            return
        with self._lock, self._conn:
            for page in _terms_pages(file_ids):
                marks = ",".join("?" * len(page))
                self._conn.execute(f"DELETE FROM chunks WHERE file_id IN ({marks})", page)
            self._log(set(file_ids))

    def _log(self, file_ids: set[str]) -> None:
        """Note the files written (in the caller's transaction), keeping the log's tail."""
        self._conn.executemany(
            "INSERT INTO changes (file_id) VALUES (?)", [(f,) for f in sorted(file_ids)]
        )
        cut = self._seq() - KEEP_CHANGES
        if cut > int(self._about("pruned") or 0):
            self._conn.execute("DELETE FROM changes WHERE seq <= ?", (cut,))
            self._conn.execute("INSERT OR REPLACE INTO about VALUES ('pruned', ?)", (cut,))

    def counts(self) -> dict[str, int]:
        with self._lock:
            found = self._conn.execute("SELECT file_id, COUNT(*) FROM chunks GROUP BY file_id")
            return {str(fid): int(n) for fid, n in found.fetchall()}

    def kept_index(self, version: object) -> Path | None:
        """``<collection>.terms.bm25/<token>-<version>``: the token is this store's own (a
        store made again, or bound to another collection, numbers its versions anew)."""
        with self._lock:
            token = self._about("token")
        return self.indexes / f"{token}-{version}"


_STAND_IN = [1.0]  # the side collection's vector: Chroma wants one, nothing queries it


class ChromaTerms:
    """The terms of an index on a Chroma server, in a collection beside it. Its metadata
    holds which collection's terms it keeps (``of``) and the last write's number (``seq``);
    each record the number of the write that made it. A process that read at ``seq`` reads
    the records numbered ``seq`` or later, and the ids of all (a removed file's are gone)."""

    def __init__(self, client: Any, name: str) -> None:
        self.client, self.name = client, name
        self.side = self._open({"seq": 0})

    def _open(self, metadata: dict[str, Any]) -> Any:  # the side collection's Chroma metadata
        return self.client.get_or_create_collection(
            self.name, metadata=metadata, embedding_function=None
        )

    def _metadata(self) -> tuple[str, dict[str, Any]]:  # its name and Chroma metadata
        """The side collection's id and metadata now (another process writes them too)."""
        found = self.client.get_collection(self.name, embedding_function=None)
        if str(found.id) != str(self.side.id):
            self.side = found  # made again by another process
        return str(found.id), dict(found.metadata or {})

    def bind(self, collection_id: str) -> bool:
        if self._metadata()[1].get("of") == collection_id:
            return True
        self.client.delete_collection(self.name)
        self.side = self._open({"of": collection_id, "seq": 0})
        return False

    def version(self) -> tuple[str, int]:
        side, metadata = self._metadata()
        return side, int(metadata.get("seq") or 0)

    def _take(self) -> int:
        """A new write's number: one past the last published."""
        return int(self._metadata()[1].get("seq") or 0) + 1

    def _publish(self, seq: int) -> None:
        """Say a write is done: the side collection's number goes up, past ``seq`` if another
        writer published it already (so a reader at it looks again)."""
        _, metadata = self._metadata()
        now = int(metadata.get("seq") or 0)
        self.side.modify(metadata={**metadata, "seq": max(seq, now + 1)})

    def _read(self, **where: Any) -> Rows:
        rows: Rows = {}
        offset = 0
        while True:
            page = self.side.get(**where, limit=_TERMS_PAGE, offset=offset, include=["metadatas"])
            if not page["ids"]:
                return rows
            for cid, meta in zip(page["ids"], page["metadatas"] or [], strict=True):
                rows[cid] = Row(
                    str(meta["file_id"]),
                    str(meta["file"]),
                    str(meta["rel"]),
                    int(meta["chunk"]),
                    tuple(str(meta.get("terms") or "").split()),
                )
            offset += len(page["ids"])

    def load(self) -> tuple[Rows, tuple[str, int]]:
        version = self.version()
        return self._read(), version

    def _ids(self) -> set[str]:
        ids: set[str] = set()
        offset = 0
        while True:
            page = self.side.get(limit=5 * _TERMS_PAGE, offset=offset, include=[])
            if not page["ids"]:
                return ids
            ids.update(page["ids"])
            offset += len(page["ids"])

    def since(
        self, version: object, held: Mapping[str, Row]
    ) -> tuple[set[str], Rows, tuple[str, int]] | None:
        now = self.version()
        if not isinstance(version, tuple) or version[0] != now[0]:
            return None
        # The last write's records too: two writers may have taken the same number.
        written = self._read(where={"seq": {"$gte": version[1]}})
        ids = self._ids()
        fids = {r.file_id for r in written.values()}
        fids |= {r.file_id for cid, r in held.items() if cid not in ids}  # removed
        unseen = ids - held.keys() - written.keys()  # written by a writer that shared a number
        rows: Rows = {}
        for page in _terms_pages(unseen):
            rows.update(self._read(ids=page))
        fids |= {r.file_id for r in rows.values()}
        for page in _terms_pages(fids):
            rows.update(self._read(where={"file_id": {"$in": page}}))
        return fids, rows, now

    def put(self, rows: Mapping[str, Row]) -> None:
        if not rows:
            return
        seq = self._take()
        ids = list(rows)
        for start in range(0, len(ids), _TERMS_PAGE):
            page = ids[start : start + _TERMS_PAGE]
            self.side.upsert(
                ids=page,
                embeddings=[_STAND_IN] * len(page),
                metadatas=[
                    {
                        "file_id": rows[c].file_id,
                        "file": rows[c].file,
                        "rel": rows[c].rel,
                        "chunk": rows[c].chunk,
                        "terms": " ".join(rows[c].terms),
                        "seq": seq,
                    }
                    for c in page
                ],
            )
        self._publish(seq)

    def drop(self, file_ids: Collection[str]) -> None:
        if not file_ids:
            return
        for page in _terms_pages(file_ids):
            self.side.delete(where={"file_id": {"$in": page}})
        self._publish(self._take())

    def kept_index(self, version: object) -> Path | None:
        return None  # no folder every process reads: each builds its own

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        offset = 0
        while True:
            page = self.side.get(limit=5 * _TERMS_PAGE, offset=offset, include=["metadatas"])
            if not page["ids"]:
                return found
            for meta in page["metadatas"] or []:
                found[str(meta["file_id"])] = found.get(str(meta["file_id"]), 0) + 1
            offset += len(page["ids"])


# A file's title as a text writes it ("Kiss and Tell (1945 film)": its dots, apostrophes
# and brackets), not local2.retrieval's terms: a link is the name itself, not its stems.
_TOKEN = re.compile(r"[\w'’.-]+|[(),&]")
_POSSESSIVE = re.compile(r"['’]s$")
_STARTS_AFTER = ".!?:#\n"  # what comes before a sentence's first word
_NOTE = re.compile(r"\s*\([^()]*\)\s*$")  # "Kiss and Tell (1945 film)": a note on the name
MAX_TITLE_WORDS = 8  # a longer file name is not looked for in a text
_LEXICAL_PAGE = 500  # files per Chroma read


def chunk_terms(text: str, meta: dict[str, Any]) -> list[str]:  # a chunk's Chroma metadata
    """A chunk's terms: its file's path (a file's name often says what it is about), then
    its text."""
    return terms(f"{meta.get('rel') or ''}\n{text}")


def chunk_row(text: str, meta: dict[str, Any]) -> Row:  # a chunk's Chroma metadata
    """What the BM25 side keeps of a chunk of the index (its text, its Chroma metadata)."""
    return Row(
        str(meta.get("file_id") or ""),
        str(meta.get("file") or ""),
        str(meta.get("rel") or ""),
        int(meta.get("chunk") or 0),
        tuple(chunk_terms(text, meta)),
    )


# indexed: each file's first chunk's Chroma metadata, by file id
def reconcile(collection: Any, store: Terms, indexed: dict[str, dict[str, Any]]) -> None:
    """Make the terms ``store`` keeps match ``collection``'s chunks (``indexed``: each file's
    first chunk's metadata): a file whose terms are missing or short (an index of before, a
    write cut off between the chunks and their terms) has them read again from its chunks,
    once; the terms of a file the collection no longer has are dropped."""
    kept = store.counts()
    store.drop([fid for fid in kept if fid not in indexed])
    lacking = sorted(fid for fid, meta in indexed.items() if _lacking(meta, kept.get(fid, 0)))
    for start in range(0, len(lacking), _LEXICAL_PAGE):
        page = lacking[start : start + _LEXICAL_PAGE]
        found = collection.get(where={"file_id": {"$in": page}}, include=["documents", "metadatas"])
        texts, metas = found["documents"] or [], found["metadatas"] or []
        rows = {
            cid: chunk_row(text, dict(meta))
            for cid, text, meta in zip(found["ids"], texts, metas, strict=True)
            if text
        }
        store.drop(page)
        store.put(rows)


def _lacking(first: dict[str, Any], kept: int) -> bool:  # a first chunk's Chroma metadata
    """Whether a file's terms kept (``kept`` chunks') are short of its chunks (``first``: its
    first chunk's metadata, which says how many; an index of before does not: there, a file
    of text with none kept)."""
    written = first.get("chunks")
    if written is not None:
        return kept != int(written)
    return kept == 0 and int(first.get("start_line") or 0) > 0


class Lexical:
    """BM25 over one collection's chunks, read from ``store`` (``k1``, ``b``: the index's)."""

    def __init__(self, store: Terms, *, k1: float, b: float) -> None:
        self.store, self.k1, self.b = store, k1, b
        self.rows: Rows = {}
        self.loaded = False  # the rows were read (at ``version``, the store's then)
        self.version: object = None
        self._ranked: _Ranked | None = None
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Bring the rows to the store's version: all of them the first time, then the rows
        of the files written or removed since."""
        with self._lock:
            version = self.store.version()
            if self.loaded and version == self.version:
                return
            found = self.store.since(self.version, self.rows) if self.loaded else None
            if found is None:
                self.rows, self.version = self.store.load()
            else:
                files, rows, self.version = found
                kept = {c: r for c, r in self.rows.items() if r.file_id not in files}
                self.rows = kept | rows
            self.loaded, self._ranked = True, self._kept()  # another's sync may have built it

    def _kept(self) -> _Ranked | None:
        """The BM25 index of the rows as the store keeps it for their version, if it does
        (None: build it)."""
        folder = self.store.kept_index(self.version)
        if folder is None or not folder.is_dir():
            return None
        try:
            ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
            bm25 = Bm25.load(folder, len(ids), k1=self.k1, b=self.b)
        except (OSError, ValueError, KeyError):
            return None  # half removed by another process, or not ours: built again
        if len(ids) != len(self.rows) or set(ids) != self.rows.keys():
            return None
        return (bm25, ids, self.rows, _titles(ids, self.rows))

    def _keep(self, bm25: Bm25, ids: list[str]) -> None:
        """Keep the index just built for the next process at this version (written aside,
        then renamed: a reader sees all of it or none); the other versions' are removed."""
        folder = self.store.kept_index(self.version)
        if folder is None:
            return
        aside = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}")
        try:
            bm25.save(aside)
            (aside / "ids.json").write_text(json.dumps(ids), encoding="utf-8")
            aside.rename(folder)
        except OSError:  # kept already by another process, or no room: built next time
            shutil.rmtree(aside, ignore_errors=True)
            return
        for other in folder.parent.iterdir():
            if other != folder and not other.name.startswith("."):
                shutil.rmtree(other, ignore_errors=True)

    def prepare(self) -> None:
        """Bring the rows up to date and build their BM25 index now (kept for the processes
        that start after), so that the next search need not."""
        self.refresh()
        self._snapshot()

    def reset(self) -> None:
        """Forget the rows (the collection was built again): the next search reads all."""
        with self._lock:
            self.rows, self.loaded, self.version, self._ranked = {}, False, None, None

    def search(
        self, query: str, n: int, files: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``n`` best chunks for ``query`` by BM25 (``files``: of these file ids only):
        ``(chunk id, score)``, best first."""
        wanted = terms(query)
        bm25, ids, rows, _ = self._snapshot()
        if files is None:
            return [(ids[i], s) for i, s in bm25.top(wanted, n)]
        allowed = set(files)
        found = [(ids[i], s) for i, s in bm25.top(wanted, len(ids))]
        return [(c, s) for c, s in found if rows[c].file_id in allowed][:n]

    def row(self, cid: str) -> Row | None:
        return self.rows.get(cid)

    def _snapshot(self) -> _Ranked:
        """The BM25 index of the rows as they are, and the files' titles (built once per
        change)."""
        with self._lock:
            if self._ranked is None:
                ids, rows = list(self.rows), self.rows
                bm25 = Bm25([rows[c].terms for c in ids], k1=self.k1, b=self.b)
                self._ranked = (bm25, ids, rows, _titles(ids, rows))
                self._keep(bm25, ids)
            return self._ranked

    def linked(self, text: str, skip: Collection[str] = ()) -> list[str]:
        """The files ``text`` names by their title (a file's name without its suffix, as
        a note's name is a link in a folder of notes: "Felix Kelsorby" in a text names
        ``Felix Kelsorby.md``), each as its first chunk, in order of mention. A title is a
        name there, starting with a capital or a digit; a title of one word only inside a
        sentence ("Report" starting one is not ``report.pdf``). ``skip``: chunks not to
        give."""
        _, _, rows, titles = self._snapshot()
        matches = list(_TOKEN.finditer(text))
        folded = [_POSSESSIVE.sub("", m.group(0).casefold()) for m in matches]
        found: list[str] = []
        for i, match in enumerate(matches):
            if not (match.group(0)[:1].isupper() or match.group(0)[:1].isdigit()):
                continue
            before = text[max(0, match.start() - 40) : match.start()].rstrip(" \t")
            starts = not before or before[-1] in _STARTS_AFTER
            for n in range(min(MAX_TITLE_WORDS, len(matches) - i), 1 if starts else 0, -1):
                cid = titles.get(" ".join(folded[i : i + n]))
                if cid is not None:
                    if cid not in skip and cid not in found and cid in rows:
                        found.append(cid)
                    break
        return found


_Ranked = tuple[Bm25, list[str], Rows, dict[str, str]]


def _titles(ids: list[str], rows: Rows) -> dict[str, str]:
    """Each file's title (its name without the suffix, its words as a text's tokens,
    folded; four characters at least) -> its first chunk."""
    titles: dict[str, tuple[int, int, str]] = {}  # title -> (a short form, chunk, chunk id)
    for cid in ids:
        stem, chunk = PurePath(rows[cid].rel).stem, rows[cid].chunk
        for short, name in enumerate(dict.fromkeys((stem, _NOTE.sub("", stem)))):
            title = " ".join(_TOKEN.findall(name)).casefold()
            if len(title) < 4 or len(title.split()) > MAX_TITLE_WORDS:
                continue
            if title not in titles or (short, chunk) < titles[title][:2]:
                titles[title] = (short, chunk, cid)
    return {title: cid for title, (_, _, cid) in titles.items()}


CANDIDATES = 50  # each side's ranking that is fused (at least 4 x k)
RRF_K = 60  # reciprocal-rank fusion's k (Cormack et al.; measured: bench/folder_search.py)
LINKING = 2  # the best hits whose links are followed (measured: 2 and 3 alike, 1 less)
PASSAGE_CHARS = 360  # a hit's passage, as search_files shows it


@dataclass
class SearchHit:
    path: str  # display path, e.g. notes/budget.md
    start_line: int  # lines of the file (of its page, for a document)
    end_line: int
    similarity: float  # cosine similarity of the chunk to the query
    text: str  # the whole chunk
    page: int | None = None  # a document's page (slide, chapter)
    file_id: str = ""
    unit: str = "page"  # page, slide or chapter
    score: float = 0.0  # the fused score (higher is better)
    bm25_rank: int | None = None  # 1-based rank by BM25 (None: not among its candidates)
    vector_rank: int | None = None  # 1-based rank by similarity (None: not among them)
    linked_rank: int | None = None  # 1-based rank among the files the best hits name
    linked_from: str | None = None  # the display path of the best hit that names it
    passage: str = ""  # the chunk's best passage for the query

    def found_by(self, named: str = "linked from {}", named_rank: str = "linked #{}") -> str:
        """Why it was found, as ``local2 search`` says it: ``words #2, meaning #1`` (its rank
        by BM25 and by similarity; a side that missed it is left out), or ``linked from
        notes/X.md`` (a best hit names it by its title: ``named`` with that hit's path, or
        ``named_rank`` with its rank among the linked files when the path is not known)."""
        ranks = (("words", self.bm25_rank), ("meaning", self.vector_rank))
        said = [f"{side} #{rank}" for side, rank in ranks if rank is not None]
        if self.linked_from:
            said.append(named.format(self.linked_from))
        elif self.linked_rank is not None:
            said.append(named_rank.format(self.linked_rank))
        return ", ".join(said)


@dataclass(frozen=True)
class _Found:
    text: str
    meta: dict[str, Any]  # a chunk's Chroma metadata
    similarity: float | None


def search(
    collection: Any,
    embedder: Embedder,
    lexical: Lexical,
    allowed: Callable[[str], str | None],
    query: str,
    k: int,
    files: Collection[str] | None = None,
    linking: int = 0,
) -> list[SearchHit]:
    """The ``k`` best chunks for ``query`` in ``collection``, both sides fused (``files``:
    only these file ids; ``allowed``: a chunk's file's display path, None once the sandbox no
    longer lets it be read; ``linking``: the best hits whose links are followed,
    :data:`LINKING` with ``files.link_notes``, 0 for notes that do not link by name)."""
    n = max(CANDIDATES, 4 * k)
    vector = embedder.embed_query(query)
    similar = _nearest(collection, lexical, vector, n, files)
    by_vector = list(similar)
    by_words = [cid for cid, _ in lexical.search(query, n, files)]
    both = [f.item for f in fuse([by_vector, by_words], k=RRF_K)]
    first = both[:linking]
    # One read for the best hits' links and, mostly, for the hits shown: on a Chroma server
    # each read is a round trip (a hit only a link found is read after, if shown).
    found = _read(collection, both[: k + linking], similar, vector)
    named_by: dict[str, str] = {}  # a file's chunk -> the best hit that names it
    for cid in first:
        if cid in found:
            for named in lexical.linked(found[cid].text, first):
                named_by.setdefault(named, cid)
    by_links = [c for c in named_by if files is None or _file_of(lexical, c) in files]
    chosen: list[tuple[Fused[str], str]] = []  # the best k still allowed, with their paths
    for fused in fuse([by_vector, by_words, by_links], k=RRF_K):  # a tie: the nearer first
        row = lexical.row(fused.item)
        path = allowed(row.file) if row is not None else None
        if path is not None:  # None: gone, or no longer allowed
            chosen.append((fused, path))
        if len(chosen) >= k:
            break
    unread = [f.item for f, _ in chosen if f.item not in found]
    found |= _read(collection, unread, similar, vector)
    return [
        _hit(found[f.item], f, path, query, _named_from(lexical, allowed, named_by.get(f.item)))
        for f, path in chosen
        if f.item in found
    ]


def _named_from(
    lexical: Lexical, allowed: Callable[[str], str | None], cid: str | None
) -> str | None:
    """The display path of the hit ``cid`` that names a file (None: none does)."""
    row = None if cid is None else lexical.row(cid)
    return None if row is None else allowed(row.file)


def _file_of(lexical: Lexical, cid: str) -> str | None:
    row = lexical.row(cid)
    return None if row is None else row.file_id


def _nearest(
    collection: Any,
    lexical: Lexical,
    vector: list[float],
    n: int,
    files: Collection[str] | None,
) -> dict[str, float]:
    """Chroma's nearest chunks, best first, with their cosine similarity: none with nothing
    in common with the query (cosine distance 1 or more), and only chunks the BM25 side
    has (not an empty marker). Only distances are read: a chunk's text is read for a hit."""
    total = int(collection.count())
    where = None if files is None else {"file_id": {"$in": sorted(files)}}
    result = collection.query(
        query_embeddings=[vector], n_results=min(total, n), where=where, include=["distances"]
    )
    ids, dists = (result.get("ids") or [[]])[0], (result.get("distances") or [[]])[0]
    return {
        cid: 1.0 - float(dist)
        for cid, dist in zip(ids, dists, strict=True)
        if float(dist) < 1.0 and lexical.row(cid) is not None
    }


def _read(
    collection: Any, ids: list[str], similar: dict[str, float], vector: Sequence[float]
) -> dict[str, _Found]:
    """The text and metadata of the chunks ``ids`` (one Chroma read), with each one's cosine
    similarity: the vector search's, else from its stored vector. A chunk gone since (or an
    empty one) is left out."""
    if not ids:
        return {}
    include = ["documents", "metadatas"]
    if any(cid not in similar for cid in ids):
        include.append("embeddings")
    got = collection.get(ids=ids, include=include)
    stored = got.get("embeddings")
    vectors = [None] * len(got["ids"]) if stored is None else list(stored)
    found = {}
    for cid, text, meta, kept in zip(
        got["ids"], got["documents"] or [], got["metadatas"] or [], vectors, strict=True
    ):
        if text:
            similarity = similar.get(cid)
            if similarity is None and kept is not None:
                similarity = _cosine(vector, kept)
            found[cid] = _Found(text, dict(meta), similarity)
    return found


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """A plain float, also for Chroma's stored vectors (numpy arrays): a numpy scalar in a
    turn's document hits cannot be checkpointed."""
    dot = float(sum(x * y for x, y in zip(a, b, strict=True)))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _hit(
    found: _Found, fused: Fused[str], path: str, query: str, linked_from: str | None
) -> SearchHit:
    meta = found.meta
    vector_rank, bm25_rank, linked_rank = fused.ranks
    return SearchHit(
        path=path,
        start_line=int(meta["start_line"]),
        end_line=int(meta["end_line"]),
        similarity=round(found.similarity or 0.0, 4),
        text=found.text,
        page=int(meta.get("page") or 0) or None,
        file_id=str(meta.get("file_id") or ""),
        unit=str(meta.get("unit") or "page"),
        score=round(fused.score, 5),
        bm25_rank=bm25_rank,
        vector_rank=vector_rank,
        linked_rank=linked_rank,
        linked_from=linked_from,
        passage=best_passage(found.text, query, PASSAGE_CHARS),
    )


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
        linking = LINKING if self.link_notes else 0
        return search(
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
