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
import logging
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Collection as Kinds
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from local2.config import Settings
from local2.contracts import LOCAL_NAME
from local2.errors import EmbedderMismatchError, MemoryStoreError
from local2.memory import per_embedder, ranking
from local2.memory.chroma import chroma_client, release_client
from local2.memory.chroma import vectors as chroma_vectors
from local2.memory.embeddings import Embedder
from local2.memory.engrams import Engrams, metadata_of
from local2.memory.facts import Fact
from local2.memory.owners import collection_base, legacy_collection_base, owner_file

if TYPE_CHECKING:  # local2.graph.state imports langgraph: memory commands start without it
    from local2.contracts import MemoryHit

log = logging.getLogger(__name__)

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
        :mod:`local2.memory.fallback`) with :attr:`notice` saying so. Engrams the collection
        lacks (kept by another embedder's collection) are re-embedded: in the background,
        ``now``, or not at all (``no``). Each owner's engrams are a collection family of
        their own (:func:`local2.memory.owners.collection_base`; local's is
        ``memory.collection``); ``owns_embedder=False``: closing leaves the embedder open for
        the stores that share it.
        """
        from local2.memory.fallback import choose_embedder

        client = chroma_client(settings, "chroma")
        base = collection_base(settings.memory.collection, owner)
        legacy = legacy_collection_base(settings.memory.collection, owner)
        if legacy is not None:
            per_embedder.adopt_family(client, legacy, base)
        notice = None
        if embedder is None:
            choice = choose_embedder(settings, per_embedder.recorded_embedders(client, base))
            embedder, notice = choice.embedder, choice.notice
        per_embedder.migrate_legacy(client, base, embedder.name)
        collection, siblings = per_embedder.open_family(client, base, embedder)
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
            full["bad"] = ranking.is_bad(full)
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
        n = ranking.candidate_count(k, sys.maxsize)
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
            ranked = ranking.rank(
                rows, k, weights, time.time(), include_bad=include_bad, kinds=kinds
            )
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
        :class:`~local2.memory.embeddings.EmbeddingError` when the embedder is unavailable.
        """
        if embedder is None:
            embedder = configured_embedder(settings)
        store = cls.open(settings, embedder, sync="no", owner=owner)
        if rebuild and store.count():
            backup = Path(settings.data_dir) / f"memory_backup_{int(time.time())}.jsonl"
            store.export(owner_file(backup, owner))
            rows = list(store.iter_all())
            vectors: list[list[float]] = []
            for i in range(0, len(rows), per_embedder.EMBED_BATCH):
                part = rows[i : i + per_embedder.EMBED_BATCH]
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
    from local2.errors import EmbeddingError
    from local2.memory.fallback import choose_embedder

    choice = choose_embedder(settings)
    if choice.missed is not None and settings.memory.embedder != "auto":
        raise EmbeddingError(f"{choice.missed} is unavailable: {choice.why}")
    return choice.embedder


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
