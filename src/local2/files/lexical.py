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

import re
import threading
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from local2.retrieval import Bm25, terms

MARK = "lexical"  # the collection metadata key of the mark
_PAGE = 1000
_TOKEN = re.compile(r"[\w'’.-]+|[(),&]")
_POSSESSIVE = re.compile(r"['’]s$")
_STARTS_AFTER = ".!?:#\n"  # what comes before a sentence's first word
_NOTE = re.compile(r"\s*\([^()]*\)\s*$")  # "Kiss and Tell (1945 film)": a note on the name
MAX_TITLE_WORDS = 8  # a longer file name is not looked for in a text


@dataclass(frozen=True)
class Row:
    """A chunk as the BM25 side keeps it: its terms, text and metadata."""

    terms: list[str]
    text: str
    meta: dict[str, Any]  # a chunk's Chroma metadata


def chunk_terms(text: str, meta: dict[str, Any]) -> list[str]:  # a chunk's Chroma metadata
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
        self._ranked: _Ranked | None = None
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
        bm25, ids, rows, _ = self._snapshot()
        if files is None:
            return [(ids[i], s) for i, s in bm25.top(wanted, n)]
        allowed = set(files)
        found = [(ids[i], s) for i, s in bm25.top(wanted, len(ids))]
        return [(c, s) for c, s in found if rows[c].meta.get("file_id") in allowed][:n]

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


_Ranked = tuple[Bm25, list[str], dict[str, Row], dict[str, str]]


def _titles(ids: list[str], rows: dict[str, Row]) -> dict[str, str]:
    """Each file's title (its name without the suffix, its words as a text's tokens,
    folded; four characters at least) -> its first chunk."""
    titles: dict[str, tuple[int, int, str]] = {}  # title -> (a short form, chunk, chunk id)
    for cid in ids:
        meta = rows[cid].meta
        stem = PurePath(str(meta.get("rel") or "")).stem
        chunk = int(meta.get("chunk") or 0)
        for short, name in enumerate(dict.fromkeys((stem, _NOTE.sub("", stem)))):
            title = " ".join(_TOKEN.findall(name)).casefold()
            if len(title) < 4 or len(title.split()) > MAX_TITLE_WORDS:
                continue
            if title not in titles or (short, chunk) < titles[title][:2]:
                titles[title] = (short, chunk, cid)
    return {title: cid for title, (_, _, cid) in titles.items()}


def new_mark() -> str:
    """A fresh mark for a collection whose chunks changed."""
    return uuid.uuid4().hex
