"""The engram store: what LoCAL2 remembers, in embedded Chroma collections.

An engram is one answered turn (``Q: ...\\nA: ...``, kind ``episodic``; words the answer
copied from a tool are cut out first), a fact distilled from a turn (kind ``fact``: one
short sentence with the ``key`` it sets, its ``source`` and the turn it came from), or a
fact the model chose to keep (kind ``saved``). A newer fact with the same key supersedes
the older one, which is kept, marked ``superseded_by``, and left out of recall.

Vectors are always computed here by an explicit
:class:`~local2.memory.embeddings.Embedder` (Chroma's default embedder would download a
model). Each embedder has its own collection (:mod:`local2.memory.per_embedder`), so vectors
from two models never meet, and memory falls back to another embedder instead of switching
off. Ratings and supersession arrive later and are merged into the metadata of every
collection without re-embedding; a rating given where memory was not open waits in a queue
file (:mod:`local2.memory.deferred`) that :meth:`EngramStore.catch_up` applies. Exact
duplicates share one id: a hash of the normalised text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Collection as Kinds
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from chromadb.api.models.Collection import Collection

from local2.config import Settings
from local2.errors import EmbedderMismatchError, MemoryStoreError
from local2.memory import deferred, per_embedder, ranking
from local2.memory.chroma import chroma_client
from local2.memory.embeddings import Embedder
from local2.memory.facts import Fact

if TYPE_CHECKING:  # local2.graph.state imports langgraph: memory commands start without it
    from local2.contracts.records import MemoryHit

log = logging.getLogger(__name__)

__all__ = ["EmbedderMismatchError", "EngramStore", "FactSaved", "MemoryStoreError"]

KINDS = ("episodic", "fact", "saved")
_PAGE = per_embedder.PAGE
_MAX_PENDING = 1000  # annotations waiting for an engram that is not stored yet


def normalise(text: str) -> str:
    """What counts as 'the same text' for deduplication: case and spacing ignored."""
    return re.sub(r"\s+", " ", text).strip().lower()


def engram_id(text: str) -> str:
    return "m" + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:12]


def turn_text(query: str, answer: str) -> str:
    return f"Q: {query.strip()}\nA: {answer.strip()}"


@dataclasses.dataclass(frozen=True)
class FactSaved:
    """What storing a fact did: its id, whether it is new, which older facts it superseded."""

    id: str
    created: bool
    superseded: list[str]


class EngramStore:
    """Store, recall, rate and manage engrams; one Chroma collection per embedder."""

    def __init__(
        self,
        collection: Collection,
        embedder: Embedder,
        settings: Settings,
        *,
        siblings: Sequence[Collection] = (),
        notice: str | None = None,
    ):
        self.collection = collection
        self.embedder = embedder
        self.settings = settings
        self.siblings = list(siblings)
        self.notice = notice  # for the person: memory runs on a fallback embedder
        self.weights = ranking.Weights.from_settings(settings.memory)
        self._pending: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sync_thread: threading.Thread | None = None
        self._deferred = deferred.queue_of(settings)

    # -- opening --------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        sync: Literal["background", "now", "no"] = "background",
    ) -> EngramStore:
        """Open (or create) the embedder's collection under ``<data_dir>/chroma``.

        Without ``embedder``, the configured one if available, else a fallback (see
        :mod:`local2.memory.fallback`) with :attr:`notice` saying so. Engrams the collection
        lacks (kept by another embedder's collection) are re-embedded: in the background,
        ``now``, or not at all (``no``).
        """
        from local2.memory.fallback import choose_embedder

        client = chroma_client(settings, "chroma")
        base = settings.memory.collection
        notice = None
        if embedder is None:
            choice = choose_embedder(settings, per_embedder.recorded_embedders(client, base))
            embedder, notice = choice.embedder, choice.notice
        per_embedder.migrate_legacy(client, base, embedder.name)
        collection, siblings = per_embedder.open_family(client, base, embedder)
        store = cls(collection, embedder, settings, siblings=siblings, notice=notice)
        store.catch_up()
        if sync == "now":
            store.sync()
        elif sync == "background":
            store.sync_in_background()
        return store

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
        embedder's connection."""
        self._stop.set()
        self.wait_for_sync(timeout=30)
        closing = getattr(self.embedder, "close", None)
        if closing is not None:
            closing()

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

    # -- writing --------------------------------------------------------------------------

    def ingest_turn(
        self,
        *,
        session_id: str,
        query_id: str,
        query: str,
        answer: str,
        tools_used: Sequence[str],
        model: str,
    ) -> str:
        """Store an answered turn; returns its engram id (the existing one if a duplicate)."""
        meta = {
            "session_id": session_id or "",
            "query_id": query_id or "",
            "kind": "episodic",
            "source": "turn",
            "tools": ",".join(dict.fromkeys(t for t in tools_used if t)),
            "model": model or "",
        }
        return self._add(turn_text(query, answer), meta)

    def save(self, text: str, *, session_id: str, query_id: str) -> str:
        """Store a fact the model chose to keep (``save_memory``); returns its engram id."""
        if not text.strip():
            raise ValueError("nothing to save: empty text")
        meta = {
            "session_id": session_id or "",
            "query_id": query_id or "",
            "kind": "saved",
            "source": "save_memory",
            "tools": "",
            "model": "",
        }
        return self._add(text.strip(), meta)

    def save_fact(self, fact: Fact, *, session_id: str, query_id: str) -> FactSaved:
        """Store a distilled fact; a newer fact with the same key supersedes older ones.

        A second wording of the same key from the same turn is not stored (the first one
        stands). The same text again re-activates it if it had been superseded.
        """
        text = " ".join(fact.text.split())
        if not text:
            raise ValueError("nothing to save: empty fact")
        eid = engram_id(text)
        with self._lock:
            same_key = self._active_facts(fact.key) if fact.key else {}
            for other, meta in same_key.items():
                if other != eid and meta.get("query_id") == query_id and query_id:
                    return FactSaved(other, False, [])
            existing = self.collection.get(ids=[eid], include=["metadatas"])
            created = not existing["ids"]
            if created:
                meta = {
                    "session_id": session_id or "",
                    "query_id": query_id or "",
                    "kind": "fact",
                    "key": fact.key,
                    "source": fact.source,
                    "extractor": fact.extractor,
                    "tools": "",
                    "model": "",
                }
                self._add_locked(eid, text, meta)
            elif (existing["metadatas"] or [{}])[0].get("superseded_by"):
                self._update_everywhere([eid], [{"superseded_by": None, "superseded_at": None}])
            older = [other for other in same_key if other != eid]
            if older:
                mark = {"superseded_by": eid, "superseded_at": time.time()}
                self._update_everywhere(older, [mark] * len(older))
        return FactSaved(eid, created, older)

    def _active_facts(self, key: str) -> dict[str, Mapping[str, Any]]:
        found = self.collection.get(
            where={"$and": [{"kind": "fact"}, {"key": key}]}, include=["metadatas"]
        )
        return {
            eid: meta or {}
            for eid, meta in zip(found["ids"], found["metadatas"] or [], strict=True)
            if not (meta or {}).get("superseded_by")
        }

    def _add(self, text: str, meta: dict[str, Any]) -> str:
        eid = engram_id(text)
        with self._lock:
            if not self.collection.get(ids=[eid], include=[])["ids"]:
                self._add_locked(eid, text, meta)
        return eid

    def _add_locked(self, eid: str, text: str, meta: dict[str, Any]) -> None:
        vector = self.embedder.embed_documents([text])[0]
        full = {**meta, "created_at": time.time(), "bad": False}
        if meta["kind"] == "episodic":
            full.update(self._pending.pop(meta["query_id"], {}))
            full["bad"] = ranking.is_bad(full)
        self.collection.add(ids=[eid], embeddings=[vector], documents=[text], metadatas=[full])

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
        update: dict[str, Any] = {}
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
                while len(self._pending) > _MAX_PENDING:
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
            where: dict[str, Any] = {"ids": [engram_id]}
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

    # -- reading --------------------------------------------------------------------------

    def recall(self, query: str, k: int = 5, **options: Any) -> list[MemoryHit]:
        """The ``k`` best memories for ``query`` by the ranking in :mod:`ranking`;
        ``options`` are those of :meth:`recall_vector`."""
        if not query.strip() or k <= 0:
            return []
        return self.recall_vector(self.embedder.embed_query(query), k, **options)

    def recall_vector(
        self,
        vector: Sequence[float],
        k: int = 5,
        *,
        include_bad: bool = False,
        kinds: Kinds[str] | None = None,
        min_similarity: float | None = None,
        exclude_ids: Kinds[str] = (),
    ) -> list[MemoryHit]:
        """Recall by an already-embedded query vector.

        ``include_bad`` keeps engrams rated bad; ``kinds`` limits the kinds recalled;
        ``min_similarity`` overrides the configured floor; ``exclude_ids`` are skipped.
        Superseded facts are never recalled.
        """
        self.catch_up()
        weights = self.weights
        if min_similarity is not None:
            weights = dataclasses.replace(weights, min_similarity=min_similarity)
        # No count() first (a round trip on every recall): a query asking for more than the
        # collection holds returns what there is, and fewer than asked means that was all.
        n = ranking.candidate_count(k, sys.maxsize)
        while n > 0:
            # No Chroma `where` here: a metadata filter turns HNSW search into a much slower
            # filtered scan (bench/memory.py: 179 ms vs 9 ms p50 at 50k). Bad, superseded and
            # unwanted engrams are dropped while re-ranking, and the candidate pool grows if
            # too many were dropped.
            result = self.collection.query(
                query_embeddings=[list(vector)],
                n_results=n,
                include=["documents", "metadatas", "distances"],
            )
            rows = [
                row
                for row in zip(
                    result["ids"][0],
                    (result["documents"] or [[]])[0],
                    (result["metadatas"] or [[]])[0],
                    (result["distances"] or [[]])[0],
                    strict=True,
                )
                if row[0] not in exclude_ids
            ]
            ranked = ranking.rank(
                rows, k, weights, time.time(), include_bad=include_bad, kinds=kinds
            )
            if len(ranked) >= k or len(result["ids"][0]) < n:
                break
            if 1.0 - float(result["distances"][0][-1]) < weights.min_similarity:
                break  # the rest are even less similar: a bigger pool would not help
            n *= 4
        else:
            return []
        return [_hit(c) for c in ranked]

    def warm_up(self) -> None:
        """A first recall's one-time work, before any question: the embedder's client and
        the collection's index (a query by a stored engram's vector: nothing is embedded)."""
        warm = getattr(self.embedder, "warm_up", None)
        if warm is not None:
            warm()
        stored = self.collection.peek(1)["embeddings"]
        if stored is not None and len(stored):
            self.recall_vector(list(stored[0]), 1)

    def get(self, engram_id: str) -> dict[str, Any] | None:
        self.catch_up()
        found = self.collection.get(ids=[engram_id], include=["documents", "metadatas"])
        if not found["ids"]:
            return None
        return _engram(found["ids"][0], found["documents"][0], found["metadatas"][0])

    def list(
        self, limit: int = 50, offset: int = 0, kind: str | None = None
    ) -> list[dict[str, Any]]:
        """Engrams newest first, optionally of one kind."""
        self.catch_up()
        if kind is not None:
            found = self.collection.get(where={"kind": kind}, include=["documents", "metadatas"])
            rows = _rows(found)
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
        return sorted(_rows(found), key=lambda r: r.get("created_at", 0.0), reverse=True)

    def iter_all(self, include_embeddings: bool = False) -> Iterator[dict[str, Any]]:
        """Every engram, page by page, in insertion order."""
        self.catch_up()
        include: list[Any] = ["documents", "metadatas"]
        if include_embeddings:
            include.append("embeddings")
        offset = 0
        while True:
            page = self.collection.get(limit=_PAGE, offset=offset, include=include)
            if not page["ids"]:
                return
            for n, eid in enumerate(page["ids"]):
                row = _engram(eid, page["documents"][n], page["metadatas"][n])
                if include_embeddings:
                    row["embedding"] = [float(x) for x in page["embeddings"][n]]
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

    # -- changing embedder -----------------------------------------------------------------

    @classmethod
    def reembed(
        cls,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[EngramStore, int]:
        """Bring ``embedder``'s collection (default: the configured one) up to date.

        Every engram another embedder's collection holds and this one lacks is re-embedded.
        With ``rebuild`` the collection is first emptied (after a JSON-lines backup to
        ``<data_dir>/memory_backup_<time>.jsonl``) and everything is re-embedded. Raises
        :class:`~local2.memory.embeddings.EmbeddingError` when the embedder is unavailable.
        """
        if embedder is None:
            embedder = configured_embedder(settings)
        store = cls.open(settings, embedder, sync="no")
        if rebuild and store.count():
            store.export(Path(settings.data_dir) / f"memory_backup_{int(time.time())}.jsonl")
            rows = list(store.iter_all())
            vectors: list[list[float]] = []
            for i in range(0, len(rows), per_embedder.EMBED_BATCH):
                part = rows[i : i + per_embedder.EMBED_BATCH]
                vectors += embedder.embed_documents([r["content"] for r in part])
                if progress is not None:
                    progress(len(vectors), len(rows))
            client = chroma_client(settings, "chroma")
            client.delete_collection(store.collection.name)
            store = cls.open(settings, embedder, sync="no")
            limit = client.get_max_batch_size()
            for i in range(0, len(rows), limit):
                part = rows[i : i + limit]
                store.collection.add(
                    ids=[r["id"] for r in part],
                    embeddings=vectors[i : i + limit],
                    documents=[r["content"] for r in part],
                    metadatas=[_metadata_of(r) for r in part],
                )
            return store, len(rows) + store.sync(progress)
        return store, store.sync(progress)


def configured_embedder(settings: Settings) -> Embedder:
    """The embedder ``memory.embedder`` asks for (``auto``: the best available), no fallback."""
    from local2.errors import EmbeddingError
    from local2.memory.fallback import choose_embedder

    choice = choose_embedder(settings)
    if choice.missed is not None and settings.memory.embedder != "auto":
        raise EmbeddingError(f"{choice.missed} is unavailable: {choice.why}")
    return choice.embedder


_ENGRAM_KEYS = ("id", "content")


def _engram(eid: str, document: str | None, meta: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"id": eid, "content": document or "", **(meta or {})}


def _rows(found: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        _engram(i, d, m)
        for i, d, m in zip(found["ids"], found["documents"], found["metadatas"], strict=True)
    ]


def _metadata_of(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in _ENGRAM_KEYS and v is not None}


def _hit(c: ranking.Candidate) -> MemoryHit:
    critic = c.meta.get("critic_score")
    reward = c.meta.get("reward")
    hit: MemoryHit = {
        "id": c.id,
        "content": c.content,
        "similarity": round(c.similarity, 4),
        "age_s": round(c.age_s, 1),
        "reward": float(reward) if reward is not None else None,
        "critic_score": int(critic) if critic is not None else None,
        "kind": str(c.meta.get("kind", "episodic")),
    }
    return hit
