"""The engrams as stored: one Chroma collection per embedder, kept in step, and read back.

:class:`Engrams` holds what every use of memory shares: the collection of the embedder in
use and its siblings (other embedders' collections, :mod:`local2.memory.per_embedder`), the
background re-embedding that copies what this one lacks, the queue of annotations given
while memory was not open (:mod:`local2.memory.deferred`), and listing, reading, deleting
and exporting engrams. :class:`local2.memory.store.EngramStore` adds remembering, recalling
and rating.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from chromadb.api.models.Collection import Collection

from local2.config import Settings
from local2.contracts import LOCAL_NAME
from local2.memory import deferred, per_embedder, ranking
from local2.memory.chroma import release_client
from local2.memory.embeddings import Embedder

log = logging.getLogger(__name__)

PAGE = per_embedder.PAGE
MAX_PENDING = 1000  # annotations waiting for an engram that is not stored yet


class Engrams:
    """The stored engrams across embedders' collections."""

    def __init__(
        self,
        collection: Collection,
        embedder: Embedder,
        settings: Settings,
        *,
        siblings: Sequence[Collection] = (),
        notice: str | None = None,
        owner: str = LOCAL_NAME,
        owns_embedder: bool = True,
    ):
        self.collection = collection
        self.embedder = embedder
        self.settings = settings
        self.siblings = list(siblings)
        self.notice = notice  # for the person: memory runs on a fallback embedder
        self.owner = owner  # whose engrams these are (:mod:`local2.memory.owners`)
        self.owns_embedder = owns_embedder  # False: shared with other people's stores
        self.weights = ranking.Weights.from_settings(settings.memory)
        self._pending: OrderedDict[str, dict[str, float]] = OrderedDict()  # grades, by query
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sync_thread: threading.Thread | None = None
        self._deferred = deferred.queue_of(settings, owner)
        self.client: Any = None  # the Chroma client it was opened with: closed with it

    # -- keeping collections in step -------------------------------------------------------

    def sync(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Re-embed every engram this collection lacks from the others; returns how many."""
        if not self.siblings:
            return 0
        return per_embedder.copy_missing(
            self.collection,
            self.siblings,
            self.embedder,
            self._lock,
            stop=self._stop,
            progress=progress,
        )

    def sync_in_background(self) -> bool:
        """Start :meth:`sync` in a thread when there is anything to copy; True if started."""
        if not self.siblings:
            return False
        lacking = len(per_embedder.missing(self.collection, self.siblings))
        if not lacking:
            return False
        if self.notice:
            self.notice += f" Re-embedding {lacking} memories for it now."
        self._sync_thread = threading.Thread(
            target=self._sync_quietly, name="local2-memory-sync", daemon=True
        )
        self._sync_thread.start()
        return True

    def _sync_quietly(self) -> None:
        try:
            n = self.sync()
            log.info("memory: re-embedded %d engrams with %s", n, self.embedder.name)
        except Exception as exc:  # the store still works with what it has
            log.warning("memory: background re-embedding stopped: %s", exc)

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Wait for a background re-embedding; True when none is running any more."""
        thread = self._sync_thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def close(self) -> None:
        """Stop a background re-embedding (it resumes at the next open); release the
        embedder's connection unless other stores share it."""
        self._stop.set()
        self.wait_for_sync(timeout=30)
        closing = getattr(self.embedder, "close", None) if self.owns_embedder else None
        if closing is not None:
            closing()
        if self.client is not None:
            release_client(self.client)
            self.client = None

    def catch_up(self) -> int:
        """Apply the annotations other processes queued while memory was not open
        (:mod:`local2.memory.deferred`); returns how many. Cheap when there are none (two
        ``stat`` calls): run on opening and before every recall and listing. A failure is
        logged and the annotations stay queued."""
        if not self._deferred.waiting():
            return 0
        try:
            return deferred.apply(self, self._deferred)
        except Exception as exc:
            log.warning("memory: queued annotations not applied yet: %s", exc)
            return 0

    @property
    def _all_collections(self) -> list[Collection]:
        return [self.collection, *self.siblings]

    # -- annotating ------------------------------------------------------------------------

    # metadatas: Chroma metadata, as its collections take it
    def _update_everywhere(self, ids: list[str], metadatas: list[dict[str, Any]]) -> None:
        """Merge metadata into these engrams in every embedder's collection that has them."""
        for collection in self._all_collections:
            present = set(collection.get(ids=ids, include=[])["ids"])
            pairs = [(i, m) for i, m in zip(ids, metadatas, strict=True) if i in present]
            if pairs:
                collection.update(ids=[i for i, _ in pairs], metadatas=[m for _, m in pairs])

    def annotate(
        self, query_id: str, *, critic_score: int | None = None, reward: float | None = None
    ) -> int:
        """Record a critic grade and/or a person's rating on the turn's engram.

        Returns how many engrams were updated. When the turn is not stored yet (``ingest``
        runs in parallel with ``critique``) the values wait and are applied when it is.
        """
        update: dict[str, float] = {}
        if critic_score is not None:
            update["critic_score"] = int(critic_score)
        if reward is not None:
            update["reward"] = float(reward)
        if not update or not query_id:
            return 0
        with self._lock:
            found = self.collection.get(
                where={"$and": [{"query_id": query_id}, {"kind": "episodic"}]},
                include=["metadatas"],
            )
            if not found["ids"]:
                self._pending[query_id] = {**self._pending.pop(query_id, {}), **update}
                while len(self._pending) > MAX_PENDING:
                    self._pending.popitem(last=False)
                return 0
            metas = []
            for old in found["metadatas"] or []:
                merged = {**(old or {}), **update}
                metas.append({**update, "bad": ranking.is_bad(merged)})
            self._update_everywhere(list(found["ids"]), metas)
        return len(found["ids"])

    def mark(
        self, engram_id: str | None = None, *, query_id: str | None = None, **fields: Any
    ) -> int:
        """Merge ``fields`` into an engram's metadata without re-embedding it (a compared
        answer's ``respondent_id``, ``pairwise_winner``, grade): the engram ``engram_id``, or
        every answer stored for ``query_id``. Returns how many were updated."""
        if engram_id is not None:
            where: dict[str, Any] = {"ids": [engram_id]}  # Chroma's get() filter
        elif query_id:
            where = {"where": {"$and": [{"query_id": query_id}, {"kind": "episodic"}]}}
        else:
            return 0
        with self._lock:
            found = self.collection.get(**where, include=["metadatas"])
            if not found["ids"]:
                return 0
            metas = [
                {**fields, "bad": ranking.is_bad({**(old or {}), **fields})}
                for old in found["metadatas"] or []
            ]
            self._update_everywhere(list(found["ids"]), metas)
        return len(found["ids"])

    # -- reading ---------------------------------------------------------------------------

    def get(self, engram_id: str) -> dict[str, Any] | None:  # engram_row: Chroma's metadata
        self.catch_up()
        found = self.collection.get(ids=[engram_id], include=["documents", "metadatas"])
        if not found["ids"]:
            return None
        documents, metadatas = found["documents"], found["metadatas"]
        return engram_row(
            found["ids"][0],
            documents[0] if documents else None,
            metadatas[0] if metadatas else None,
        )

    def list(
        self, limit: int = 50, offset: int = 0, kind: str | None = None
    ) -> list[dict[str, Any]]:  # each an engram_row: id, content and its Chroma metadata
        """Engrams newest first, optionally of one kind."""
        self.catch_up()
        if kind is not None:
            found = self.collection.get(where={"kind": kind}, include=["documents", "metadatas"])
            rows = rows_of(found)
            rows.sort(key=lambda r: r.get("created_at", 0.0), reverse=True)
            return rows[max(offset, 0) : max(offset, 0) + max(limit, 0)]
        # Chroma keeps insertion order: read the page from the end.
        total = self.collection.count()
        end = max(0, total - max(offset, 0))
        start = max(0, end - max(limit, 0))
        if end <= start:
            return []
        found = self.collection.get(
            limit=end - start, offset=start, include=["documents", "metadatas"]
        )
        return sorted(rows_of(found), key=lambda r: r.get("created_at", 0.0), reverse=True)

    # each an engram_row (id, content and its Chroma metadata)
    def iter_all(self, include_embeddings: bool = False) -> Iterator[dict[str, Any]]:
        """Every engram, page by page, in insertion order."""
        self.catch_up()
        include: list[Any] = ["documents", "metadatas"]
        if include_embeddings:
            include.append("embeddings")
        offset = 0
        while True:
            page = self.collection.get(limit=PAGE, offset=offset, include=include)
            if not page["ids"]:
                return
            documents, metadatas = page["documents"] or [], page["metadatas"] or []
            embeddings = page["embeddings"] if include_embeddings else None
            for n, eid in enumerate(page["ids"]):
                row = engram_row(eid, documents[n], metadatas[n])
                if embeddings is not None:
                    row["embedding"] = [float(x) for x in embeddings[n]]
                yield row
            offset += len(page["ids"])

    def count(self) -> int:
        return self.collection.count()

    def delete(self, engram_id: str) -> bool:
        """Forget an engram, in every embedder's collection (so no re-embedding revives it)."""
        with self._lock:
            if not self.collection.get(ids=[engram_id], include=[])["ids"]:
                return False
            for collection in self._all_collections:
                collection.delete(ids=[engram_id])
        return True

    def export(self, path: str | Path) -> int:
        """Write every engram as JSON lines (id, content, metadata); returns how many."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        n = 0
        with target.open("w", encoding="utf-8") as fh:
            for row in self.iter_all():
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                n += 1
        return n


_ENGRAM_KEYS = ("id", "content")


# An engram as it is read: its id and content beside its Chroma metadata (which keys it has
# depends on its kind and on the version that stored it).
def engram_row(eid: str, document: str | None, meta: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"id": eid, "content": document or "", **(meta or {})}


def rows_of(found: Mapping[str, Any]) -> list[dict[str, Any]]:  # a Chroma get()'s, as rows
    return [
        engram_row(i, d, m)
        for i, d, m in zip(found["ids"], found["documents"], found["metadatas"], strict=True)
    ]


def metadata_of(row: Mapping[str, Any]) -> dict[str, Any]:  # a row's Chroma metadata again
    return {k: v for k, v in row.items() if k not in _ENGRAM_KEYS and v is not None}
