"""Where the BM25 side of a file index is kept: every chunk's terms, written as the chunk is,
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

import uuid
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from local2.storage import SqliteSql

_PAGE = 500  # ids per statement or Chroma read
KEEP_CHANGES = 20_000  # the log's length; a process further behind reads everything again


@dataclass(frozen=True)
class Row:
    """A chunk as the BM25 side keeps it: its file (id, path, path in its folder), its place
    in the file and its terms (:func:`local2.files._lexical.chunk_terms`)."""

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


def _pages(items: Iterable[str]) -> list[list[str]]:
    listed = sorted(set(items))
    return [listed[start : start + _PAGE] for start in range(0, len(listed), _PAGE)]


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
            for page in _pages(fids):
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
            for page in _pages(file_ids):
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
            page = self.side.get(**where, limit=_PAGE, offset=offset, include=["metadatas"])
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
            page = self.side.get(limit=5 * _PAGE, offset=offset, include=[])
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
        for page in _pages(unseen):
            rows.update(self._read(ids=page))
        fids |= {r.file_id for r in rows.values()}
        for page in _pages(fids):
            rows.update(self._read(where={"file_id": {"$in": page}}))
        return fids, rows, now

    def put(self, rows: Mapping[str, Row]) -> None:
        if not rows:
            return
        seq = self._take()
        ids = list(rows)
        for start in range(0, len(ids), _PAGE):
            page = ids[start : start + _PAGE]
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
        for page in _pages(file_ids):
            self.side.delete(where={"file_id": {"$in": page}})
        self._publish(self._take())

    def kept_index(self, version: object) -> Path | None:
        return None  # no folder every process reads: each builds its own

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        offset = 0
        while True:
            page = self.side.get(limit=5 * _PAGE, offset=offset, include=["metadatas"])
            if not page["ids"]:
                return found
            for meta in page["metadatas"] or []:
                found[str(meta["file_id"])] = found.get(str(meta["file_id"]), 0) + 1
            offset += len(page["ids"])
