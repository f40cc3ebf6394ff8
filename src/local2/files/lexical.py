"""The BM25 side of a file index: every chunk's terms, kept beside its vectors.

The terms are derived from what the Chroma collection stores (each chunk's text and file),
so the side works the same over a local collection and the team's Chroma server, and needs
no store of its own. A process reads them all once, at its first search; after that only
the files a sync changed are read again (:meth:`Lexical.changed`), and the BM25 matrix is
rebuilt from the kept terms, which is milliseconds. Another process's sync is seen by the
collection's ``lexical`` mark (a token each change writes into the collection's metadata):
when it is not the one this side was read at, everything is read again.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from local2.retrieval.bm25 import Bm25
from local2.retrieval.text import terms

MARK = "lexical"  # the collection metadata key of the mark
_PAGE = 1000


@dataclass(frozen=True)
class Row:
    """A chunk as the BM25 side keeps it: its terms, text and metadata."""

    terms: list[str]
    text: str
    meta: dict[str, Any]


def chunk_terms(text: str, meta: dict[str, Any]) -> list[str]:
    """A chunk's terms: its file's path (a file's name often says what it is about), then
    its text."""
    return terms(f"{meta.get('rel') or ''}\n{text}")


class Lexical:
    """BM25 over one collection's chunks (``k1``, ``b``: the index's)."""

    def __init__(self, *, k1: float, b: float) -> None:
        self.k1, self.b = k1, b
        self.rows: dict[str, Row] = {}
        self.loaded = False  # the rows were read (at ``mark``, the collection's then)
        self.mark: str | None = None
        self._ranked: tuple[Bm25, list[str], dict[str, Row]] | None = None
        self._lock = threading.Lock()

    def _add(self, found: Any) -> None:
        texts = found.get("documents") or []
        for cid, text, meta in zip(found["ids"], texts, found.get("metadatas") or [], strict=True):
            if text:  # an empty marker: a file with no text
                self.rows[cid] = Row(chunk_terms(text, dict(meta)), text, dict(meta))

    def load(self, collection: Any, mark: str | None) -> None:
        """Read every chunk of ``collection`` (it is at ``mark``)."""
        with self._lock:
            self.rows = {}
            self.loaded = False
            offset = 0
            while True:
                page = collection.get(
                    limit=_PAGE, offset=offset, include=["documents", "metadatas"]
                )
                if not page["ids"]:
                    break
                self._add(page)
                offset += len(page["ids"])
            self.loaded, self.mark, self._ranked = True, mark, None

    def reset(self) -> None:
        """Forget the rows (the collection was built again): the next search reads all."""
        with self._lock:
            self.rows, self.loaded, self.mark, self._ranked = {}, False, None, None

    def changed(self, collection: Any, file_ids: Iterable[str], mark: str) -> None:
        """Read again the chunks of the files a sync changed (``file_ids``), now at ``mark``;
        nothing when the side was never read (its first search reads all)."""
        fids = sorted(set(file_ids))
        with self._lock:
            if not self.loaded:
                return
            gone = set(fids)
            self.rows = {c: r for c, r in self.rows.items() if r.meta.get("file_id") not in gone}
            for start in range(0, len(fids), _PAGE):
                found = collection.get(
                    where={"file_id": {"$in": fids[start : start + _PAGE]}},
                    include=["documents", "metadatas"],
                )
                self._add(found)
            self.mark, self._ranked = mark, None

    def search(
        self, query: str, n: int, files: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``n`` best chunks for ``query`` by BM25 (``files``: of these file ids only):
        ``(chunk id, score)``, best first."""
        wanted = terms(query)
        with self._lock:
            if self._ranked is None:
                ids, rows = list(self.rows), self.rows
                self._ranked = (Bm25([rows[c].terms for c in ids], k1=self.k1, b=self.b), ids, rows)
            bm25, ids, rows = self._ranked
        if files is None:
            return [(ids[i], s) for i, s in bm25.top(wanted, n)]
        allowed = set(files)
        found = [(ids[i], s) for i, s in bm25.top(wanted, len(ids))]
        return [(c, s) for c, s in found if rows[c].meta.get("file_id") in allowed][:n]

    def row(self, cid: str) -> Row | None:
        return self.rows.get(cid)


def new_mark() -> str:
    """A fresh mark for a collection whose chunks changed."""
    return uuid.uuid4().hex
