"""The BM25 side of a file index: every chunk's terms, kept beside its vectors.

Each chunk's terms are written as the chunk is, to a store beside the index
(:mod:`._lexical_store`: a SQLite file beside an embedded index, a side collection on the
team's Chroma server), so a chunk an unfinished build has written is searched by its words
as by its vector, and a process's first search reads the terms back without tokenising
anything, and the BM25 index a sync built and kept, where the store keeps one. After that,
each search asks the store whether anything changed (one query) and reads again only the
files another process, or this one, wrote or removed since (:meth:`Lexical.refresh`); the
BM25 index is built again from the kept terms at the next search after a change (bm25s
computes every score as it indexes, and BM25's weights depend on every chunk: 80 ms for
2,700 chunks), or at the end of a sync (:meth:`Lexical.prepare`), and kept.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import uuid
from collections.abc import Collection
from pathlib import PurePath
from typing import Any

from local2.files._lexical_store import Row, Rows, Terms
from local2.retrieval import Bm25, terms

# A file's title as a text writes it ("Kiss and Tell (1945 film)": its dots, apostrophes
# and brackets), not local2.retrieval's terms: a link is the name itself, not its stems.
_TOKEN = re.compile(r"[\w'’.-]+|[(),&]")
_POSSESSIVE = re.compile(r"['’]s$")
_STARTS_AFTER = ".!?:#\n"  # what comes before a sentence's first word
_NOTE = re.compile(r"\s*\([^()]*\)\s*$")  # "Kiss and Tell (1945 film)": a note on the name
MAX_TITLE_WORDS = 8  # a longer file name is not looked for in a text
_PAGE = 500  # files per Chroma read


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
    for start in range(0, len(lacking), _PAGE):
        page = lacking[start : start + _PAGE]
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
