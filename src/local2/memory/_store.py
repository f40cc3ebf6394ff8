"""The engram store: what LoCAL2 remembers, in Chroma collections, one per embedder and kept in
step, read back and ranked (similarity, age and rating in one score). Importing it imports
chromadb (seconds): the modules that open memory import it only when they do.
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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from chromadb.api.models.Collection import Collection
from chromadb.errors import NotFoundError

from local2.config import MemorySettings, Settings
from local2.contracts import LOCAL_NAME
from local2.errors import EmbedderMismatchError, EmbeddingError, MemoryStoreError
from local2.memory import deferred
from local2.memory._embedders import Embedder, choose_embedder
from local2.memory._facts import Fact
from local2.memory._owners import (
    chroma_client,
    collection_base,
    legacy_collection_base,
    owner_file,
    release_client,
)
from local2.memory._owners import vectors as chroma_vectors

if TYPE_CHECKING:
    from local2.contracts import MemoryHit


# --- ranking ----------------------------------------------------------------------------
# Recall ranking: how a memory's similarity, age and rating combine into one score.
#
#     score = w_sim * similarity + w_recency * recency + w_reward * reward_term
#
# - ``similarity`` = 1 - cosine distance (the collection uses the cosine space), in [-1, 1].
# - ``recency`` = 0.5 ** (age_days / half_life_days): 1 when new, 0.5 after one half-life.
# - ``reward_term`` in [-1, 1]: the person's rating (1-5) mapped by (r - 3) / 2 when there is
#   one; else the critic's grade (1-5) mapped the same way at half weight (a judge is less
#   sure than the person); else 0 (neutral, neither helped nor hurt).
#
# Weights, half-life and the similarity floor come from ``MemorySettings``. Engrams rated bad
# (reward <= 2) or graded low (critic_score <= 2) are left out of recall unless asked for, and
# hits below ``min_similarity`` are dropped before ranking (as are facts a newer fact
# superseded), so a good rating can lift a
# relevant memory but never make an irrelevant one appear. Chroma returns more candidates
# than ``k`` (see :func:`candidate_count`) so re-ranking can reorder beyond its top ``k``.

BAD_THRESHOLD = 2  # ratings and grades at or below this mark an engram as bad
SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class Weights:
    similarity: float
    recency: float
    reward: float
    half_life_days: float
    min_similarity: float

    @classmethod
    def from_settings(cls, memory: MemorySettings) -> Weights:
        return cls(
            similarity=memory.weight_similarity,
            recency=memory.weight_recency,
            reward=memory.weight_reward,
            half_life_days=memory.recency_half_life_days,
            min_similarity=memory.min_similarity,
        )


def candidate_count(k: int, total: int) -> int:
    """How many nearest neighbours to fetch before re-ranking: 4k, at least 20, at most all."""
    return max(0, min(total, max(4 * k, 20)))


def recency(age_s: float, half_life_days: float) -> float:
    return float(0.5 ** (max(age_s, 0.0) / (half_life_days * SECONDS_PER_DAY)))


def reward_term(reward: float | None, critic_score: float | None) -> float:
    if reward is not None:
        return (float(reward) - 3.0) / 2.0
    if critic_score is not None:
        return 0.5 * (float(critic_score) - 3.0) / 2.0
    return 0.0


def is_bad(meta: Mapping[str, Any]) -> bool:
    """Rated bad by the person or graded low by the critic."""
    reward, critic = meta.get("reward"), meta.get("critic_score")
    return (reward is not None and reward <= BAD_THRESHOLD) or (
        critic is not None and critic <= BAD_THRESHOLD
    )


def score(similarity: float, age_s: float, meta: Mapping[str, Any], w: Weights) -> float:
    return (
        w.similarity * similarity
        + w.recency * recency(age_s, w.half_life_days)
        + w.reward * reward_term(meta.get("reward"), meta.get("critic_score"))
    )


@dataclass(frozen=True)
class Candidate:
    id: str
    content: str
    meta: Mapping[str, Any]
    similarity: float
    age_s: float
    score: float


def rank(
    rows: list[tuple[str, str, Mapping[str, Any], float]],
    k: int,
    w: Weights,
    now: float,
    *,
    include_bad: bool = False,
    kinds: Kinds[str] | None = None,
) -> list[Candidate]:
    """Re-rank ``(id, content, metadata, cosine distance)`` rows and keep the best ``k``.

    Superseded facts never count; ``kinds`` (when given) keeps only engrams of those kinds.
    """
    kept: list[Candidate] = []
    for engram_id, content, meta, distance in rows:
        similarity = 1.0 - float(distance)
        if similarity < w.min_similarity or (not include_bad and is_bad(meta)):
            continue
        if meta.get("superseded_by") or (kinds is not None and meta.get("kind") not in kinds):
            continue
        age_s = max(0.0, now - float(meta.get("created_at", now)))
        kept.append(
            Candidate(
                engram_id, content, meta, similarity, age_s, score(similarity, age_s, meta, w)
            )
        )
    kept.sort(key=lambda c: c.score, reverse=True)
    return kept[:k]


# --- per_embedder -----------------------------------------------------------------------
# One Chroma collection per embedder, kept in step: the consistent fallback of memory.
#
# Vectors of two embedding models (or two prefix schemes) cannot be compared, so each embedder
# has its own collection, named ``<memory.collection>.<embedder>`` and recording the model and
# prefix scheme in its metadata. The engrams are the same in every collection (same ids, text
# and metadata); only the vectors differ. A collection that lacks engrams another one holds is
# brought up to date by re-embedding their text (:func:`copy_missing`): in the background when
# memory falls back, at once with ``local2 memory reembed``. A collection from before this
# scheme (named just ``<memory.collection>``) is renamed on first open.

log = logging.getLogger(__name__)

PAGE = 1000  # rows per Chroma get() when walking a collection
EMBED_BATCH = 32


def collection_name(base: str, embedder_name: str) -> str:
    """``engrams.nomic-embed-text``; Chroma allows [a-zA-Z0-9._-], alphanumeric at both ends."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", embedder_name.rsplit("/", 1)[-1]).strip("-._")
    return f"{base}.{slug or 'embedder'}"[:512]


def collection_metadata(embedder: Embedder) -> dict[str, Any]:  # Chroma collection metadata
    return {"embedder": embedder.name, "embedder_scheme": embedder.scheme}


def _get(client: Any, name: str) -> Collection | None:
    try:
        # embedding_function=None: never let Chroma attach its downloading default embedder.
        found: Collection = client.get_collection(name, embedding_function=None)
        return found
    except (NotFoundError, ValueError):
        return None


def family(client: Any, base: str) -> dict[str, Collection]:
    """The collections of this memory by name: ``base`` (legacy) and ``base.<embedder>``."""
    found: dict[str, Collection] = {}
    for listed in client.list_collections():
        name = listed if isinstance(listed, str) else listed.name
        if name != base and not name.startswith(base + "."):
            continue
        collection = _get(client, name)
        # ``base.<x>`` without a recorded embedder is not ours (a person's own collection).
        if collection is not None and (name == base or (collection.metadata or {}).get("embedder")):
            found[name] = collection
    return found


def recorded_embedders(client: Any, base: str) -> list[str]:
    return [
        str(c.metadata["embedder"])
        for c in family(client, base).values()
        if (c.metadata or {}).get("embedder")
    ]


def migrate_legacy(client: Any, base: str, default_embedder: str) -> None:
    """Rename the single collection of earlier versions to its embedder's name."""
    legacy = _get(client, base)
    if legacy is None:
        return
    recorded = (legacy.metadata or {}).get("embedder") or default_embedder
    target = collection_name(base, str(recorded))
    if _get(client, target) is not None:
        log.warning("memory: both %s and %s exist; leaving %s as it is", base, target, base)
        return
    legacy.modify(name=target)
    log.info("memory: collection %s renamed to %s", base, target)


def adopt_family(client: Any, old_base: str, base: str) -> None:
    """Rename every collection of the ``old_base`` family to the same name under ``base``,
    once (a person's collections under the short key of before,
    :func:`local2.memory._owners.legacy_collection_base`). Nothing moves while ``base``'s
    family has a collection: two families are never merged."""
    old = family(client, old_base)
    if not old:
        return
    if family(client, base):
        log.warning("memory: both %s and %s exist; leaving %s as it is", old_base, base, old_base)
        return
    for name, collection in old.items():
        target = base + name[len(old_base) :]
        collection.modify(name=target)
        log.warning("memory: collection %s renamed to %s (full-hash owner key)", name, target)


def open_family(client: Any, base: str, embedder: Embedder) -> tuple[Collection, list[Collection]]:
    """The embedder's own collection (created if new) and its siblings."""
    name = collection_name(base, embedder.name)
    collection = _get(client, name)
    if collection is None:
        collection = client.get_or_create_collection(
            name,
            configuration={"hnsw": {"space": "cosine"}},
            metadata=collection_metadata(embedder),
            embedding_function=None,
        )
    else:
        check_embedder(collection.metadata or {}, embedder, name)
    siblings = [c for n, c in family(client, base).items() if n not in (name, base)]
    return collection, siblings


def check_embedder(recorded: Mapping[str, Any], embedder: Embedder, name: str) -> None:
    model, scheme = recorded.get("embedder"), recorded.get("embedder_scheme")
    if model is None or (model == embedder.name and scheme == embedder.scheme):
        return
    raise EmbedderMismatchError(
        f"memory collection {name!r} was built with embedding model {model!r} (prefix scheme "
        f"{scheme!r}) but is opened with {embedder.name!r} (prefix scheme {embedder.scheme!r}); "
        f"vectors of two models cannot be mixed. Run `local2 memory reembed --rebuild` to "
        f"re-embed it with the configured model"
    )


def ids_of(collection: Collection) -> set[str]:
    ids: set[str] = set()
    offset = 0
    while True:
        page = collection.get(limit=PAGE, offset=offset, include=[])
        if not page["ids"]:
            return ids
        ids.update(page["ids"])
        offset += len(page["ids"])


def missing(target: Collection, sources: Sequence[Collection]) -> dict[str, Collection]:
    """Engram ids some source holds and ``target`` lacks, each with one source that has it."""
    have = ids_of(target)
    lacking: dict[str, Collection] = {}
    for source in sources:
        for eid in ids_of(source) - have:
            lacking.setdefault(eid, source)
    return lacking


def copy_missing(
    target: Collection,
    sources: Sequence[Collection],
    embedder: Embedder,
    lock: threading.Lock,
    *,
    stop: threading.Event | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Re-embed into ``target`` every engram it lacks; returns how many were added."""
    lacking = missing(target, sources)
    by_source: dict[int, tuple[Collection, list[str]]] = {}
    for eid, source in lacking.items():
        by_source.setdefault(id(source), (source, []))[1].append(eid)
    done = 0
    for source, ids in by_source.values():
        for i in range(0, len(ids), EMBED_BATCH):
            if stop is not None and stop.is_set():
                return done
            rows = source.get(ids=ids[i : i + EMBED_BATCH], include=["documents", "metadatas"])
            docs = [d or "" for d in rows["documents"] or []]
            vectors = embedder.embed_documents(docs)
            with lock:
                already = set(target.get(ids=list(rows["ids"]), include=[])["ids"])
                keep = [n for n, eid in enumerate(rows["ids"]) if eid not in already]
                if keep:
                    target.add(
                        ids=[rows["ids"][n] for n in keep],
                        embeddings=chroma_vectors([vectors[n] for n in keep]),
                        documents=[docs[n] for n in keep],
                        metadatas=[dict((rows["metadatas"] or [])[n] or {}) for n in keep],
                    )
            done += len(keep)
            if progress is not None:
                progress(done, len(lacking))
    return done


# --- engrams ----------------------------------------------------------------------------
# The engrams as stored: one Chroma collection per embedder, kept in step, and read back.
#
# :class:`Engrams` holds what every use of memory shares: the collection of the embedder in
# use and its siblings (other embedders' collections, :mod:`local2.memory._store`), the
# background re-embedding that copies what this one lacks, the queue of annotations given
# while memory was not open (:mod:`local2.memory.deferred`), and listing, reading, deleting
# and exporting engrams. :class:`local2.memory._store.EngramStore` adds remembering, recalling
# and rating.

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
        self.owner = owner  # whose engrams these are (:mod:`local2.memory._owners`)
        self.owns_embedder = owns_embedder  # False: shared with other people's stores
        self.weights = Weights.from_settings(settings.memory)
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
        return copy_missing(
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
        lacking = len(missing(self.collection, self.siblings))
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
                metas.append({**update, "bad": is_bad(merged)})
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
                {**fields, "bad": is_bad({**(old or {}), **fields})}
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


# --- store ------------------------------------------------------------------------------
# The engram store: what LoCAL2 remembers, in embedded Chroma collections.
#
# An engram is one answered turn (``Q: ...\nA: ...``, kind ``episodic``; words the answer
# copied from a tool are cut out first), a fact distilled from a turn (kind ``fact``: one
# short sentence with the ``key`` it sets, its ``source`` and the turn it came from), or a
# fact the model chose to keep (kind ``saved``). A newer fact with the same key supersedes
# the older one, which is kept, marked ``superseded_by``, and left out of recall.
#
# Vectors are always computed here by an explicit
# :class:`~local2.memory._embedders.Embedder` (Chroma's default embedder would download a
# model). Each embedder has its own collection (:mod:`local2.memory._store`), so vectors
# from two models never meet, and memory falls back to another embedder instead of switching
# off. Ratings and supersession arrive later and are merged into the metadata of every
# collection without re-embedding; a rating given where memory was not open waits in a queue
# file (:mod:`local2.memory.deferred`) that :meth:`EngramStore.catch_up` applies. Exact
# duplicates share one id: a hash of the normalised text.

__all__ = ["EmbedderMismatchError", "EngramStore", "FactSaved", "MemoryStoreError"]

KINDS = ("episodic", "fact", "saved")


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


class EngramStore(Engrams):
    """Store, recall, rate and manage engrams; one Chroma collection per embedder."""

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        sync: Literal["background", "now", "no"] = "background",
        owner: str = LOCAL_NAME,
        owns_embedder: bool = True,
    ) -> EngramStore:
        """Open (or create) ``owner``'s collection of the embedder under ``<data_dir>/chroma``.

        Without ``embedder``, the configured one if available, else a fallback (see
        :mod:`local2.memory._embedders`) with :attr:`notice` saying so. Engrams the collection
        lacks (kept by another embedder's collection) are re-embedded: in the background,
        ``now``, or not at all (``no``). Each owner's engrams are a collection family of
        their own (:func:`local2.memory._owners.collection_base`; local's is
        ``memory.collection``); ``owns_embedder=False``: closing leaves the embedder open for
        the stores that share it.
        """

        client = chroma_client(settings, "chroma")
        base = collection_base(settings.memory.collection, owner)
        legacy = legacy_collection_base(settings.memory.collection, owner)
        if legacy is not None:
            adopt_family(client, legacy, base)
        notice = None
        if embedder is None:
            choice = choose_embedder(settings, recorded_embedders(client, base))
            embedder, notice = choice.embedder, choice.notice
        migrate_legacy(client, base, embedder.name)
        collection, siblings = open_family(client, base, embedder)
        store = cls(
            collection,
            embedder,
            settings,
            siblings=siblings,
            notice=notice,
            owner=owner,
            owns_embedder=owns_embedder,
        )
        store.client = client
        store.catch_up()
        if sync == "now":
            store.sync()
        elif sync == "background":
            store.sync_in_background()
        return store

    # -- writing ---------------------------------------------------------------------------

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

    def _add(self, text: str, meta: dict[str, Any]) -> str:  # meta: the engram's Chroma metadata
        eid = engram_id(text)
        with self._lock:
            if not self.collection.get(ids=[eid], include=[])["ids"]:
                self._add_locked(eid, text, meta)
        return eid

    def _add_locked(self, eid: str, text: str, meta: dict[str, Any]) -> None:  # Chroma metadata
        vector = self.embedder.embed_documents([text])[0]
        full = {**meta, "created_at": time.time(), "bad": False}
        if meta["kind"] == "episodic":
            full.update(self._pending.pop(meta["query_id"], {}))
            full["bad"] = is_bad(full)
        self.collection.add(
            ids=[eid], embeddings=chroma_vectors([vector]), documents=[text], metadatas=[full]
        )

    # -- reading ---------------------------------------------------------------------------

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
        n = candidate_count(k, sys.maxsize)
        while n > 0:
            # No Chroma `where` here: a metadata filter turns HNSW search into a much slower
            # filtered scan (bench/memory.py: 179 ms vs 9 ms p50 at 50k). Bad, superseded and
            # unwanted engrams are dropped while re-ranking, and the candidate pool grows if
            # too many were dropped.
            result = self.collection.query(
                query_embeddings=chroma_vectors([vector]),
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
            ranked = rank(rows, k, weights, time.time(), include_bad=include_bad, kinds=kinds)
            if len(ranked) >= k or len(result["ids"][0]) < n:
                break
            if 1.0 - float((result["distances"] or [[0.0]])[0][-1]) < weights.min_similarity:
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

    # -- changing embedder -----------------------------------------------------------------

    @classmethod
    def reembed(
        cls,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
        owner: str = LOCAL_NAME,
    ) -> tuple[EngramStore, int]:
        """Bring ``owner``'s collection of ``embedder`` (default: the configured one) up to
        date.

        Every engram another embedder's collection holds and this one lacks is re-embedded.
        With ``rebuild`` the collection is first emptied (after a JSON-lines backup to
        ``<data_dir>/memory_backup_<time>.jsonl``) and everything is re-embedded. Raises
        :class:`~local2.memory._embedders.EmbeddingError` when the embedder is unavailable.
        """
        if embedder is None:
            embedder = configured_embedder(settings)
        store = cls.open(settings, embedder, sync="no", owner=owner)
        if rebuild and store.count():
            backup = Path(settings.data_dir) / f"memory_backup_{int(time.time())}.jsonl"
            store.export(owner_file(backup, owner))
            rows = list(store.iter_all())
            vectors: list[list[float]] = []
            for i in range(0, len(rows), EMBED_BATCH):
                part = rows[i : i + EMBED_BATCH]
                vectors += embedder.embed_documents([r["content"] for r in part])
                if progress is not None:
                    progress(len(vectors), len(rows))
            emptied = store
            emptied.client.delete_collection(emptied.collection.name)
            limit = emptied.client.get_max_batch_size()
            store = cls.open(settings, embedder, sync="no", owner=owner)
            release_client(emptied.client)  # its embedder goes on in the new store
            emptied.client = None
            for i in range(0, len(rows), limit):
                part = rows[i : i + limit]
                store.collection.add(
                    ids=[r["id"] for r in part],
                    embeddings=chroma_vectors(vectors[i : i + limit]),
                    documents=[r["content"] for r in part],
                    metadatas=[metadata_of(r) for r in part],
                )
            return store, len(rows) + store.sync(progress)
        return store, store.sync(progress)


def configured_embedder(settings: Settings) -> Embedder:
    """The embedder ``memory.embedder`` asks for (``auto``: the best available), no fallback."""

    choice = choose_embedder(settings)
    if choice.missed is not None and settings.memory.embedder != "auto":
        raise EmbeddingError(f"{choice.missed} is unavailable: {choice.why}")
    return choice.embedder


def _hit(c: Candidate) -> MemoryHit:
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
