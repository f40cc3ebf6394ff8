"""The engram store: what LoCAL2 remembers, in an embedded Chroma collection.

An engram is one answered turn (``Q: ...\\nA: ...``, kind ``episodic``) or a fact the model
chose to keep (kind ``saved``). Vectors are always computed here by an explicit
:class:`~local2.memory.embeddings.Embedder` (Chroma's default embedder would download a
model), and the embedder's model and prefix scheme are recorded in the collection so
vectors from two models never meet. Ratings arrive later and are merged into the metadata
without re-embedding. Exact duplicates share one id: the id is a hash of the normalised text.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from chromadb.api.models.Collection import Collection
from chromadb.errors import NotFoundError

from local2.config import Settings
from local2.memory import ranking
from local2.memory.chroma import chroma_client
from local2.memory.embeddings import Embedder, make_embedder
from local2.state import MemoryHit

log = logging.getLogger(__name__)

KINDS = ("episodic", "saved")
_PAGE = 1000  # rows per Chroma get() when walking the whole collection
_MAX_PENDING = 1000  # annotations waiting for an engram that is not stored yet


class MemoryStoreError(RuntimeError):
    """Base class for memory-store errors with a message meant for people."""


class EmbedderMismatchError(MemoryStoreError):
    """The collection was built with another embedding model or prefix scheme."""


def normalise(text: str) -> str:
    """What counts as 'the same text' for deduplication: case and spacing ignored."""
    return re.sub(r"\s+", " ", text).strip().lower()


def engram_id(text: str) -> str:
    return "m" + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:12]


def turn_text(query: str, answer: str) -> str:
    return f"Q: {query.strip()}\nA: {answer.strip()}"


class EngramStore:
    """Store, recall, rate and manage engrams in one Chroma collection."""

    def __init__(self, collection: Collection, embedder: Embedder, settings: Settings):
        self.collection = collection
        self.embedder = embedder
        self.settings = settings
        self.weights = ranking.Weights.from_settings(settings.memory)
        self._pending: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    # -- opening --------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        settings: Settings,
        embedder: Embedder | None = None,
        *,
        allow_mismatch: bool = False,
    ) -> EngramStore:
        """Open (or create) the collection under ``<data_dir>/chroma``.

        Refuses a collection recorded with another embedder unless ``allow_mismatch``
        (used only by :meth:`reembed`).
        """
        client = chroma_client(settings, "chroma")
        name = settings.memory.collection
        existing = _existing_metadata(client, name)
        if embedder is None:
            embedder = make_embedder(settings, prefer=(existing or {}).get("embedder"))
        if existing is not None and not allow_mismatch:
            _check_embedder(existing, embedder, name, settings.data_dir)
        if existing is None:
            collection = client.get_or_create_collection(
                name,
                configuration={"hnsw": {"space": "cosine"}},
                metadata=_collection_metadata(embedder),
                embedding_function=None,
            )
        else:
            collection = client.get_collection(name, embedding_function=None)
        return cls(collection, embedder, settings)

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
            "tools": ",".join(dict.fromkeys(t for t in tools_used if t)),
            "model": model or "",
        }
        return self._add(turn_text(query, answer), meta)

    def save(self, text: str, *, session_id: str, query_id: str) -> str:
        """Store a fact the model chose to keep; returns its engram id."""
        if not text.strip():
            raise ValueError("nothing to save: empty text")
        meta = {
            "session_id": session_id or "",
            "query_id": query_id or "",
            "kind": "saved",
            "tools": "",
            "model": "",
        }
        return self._add(text.strip(), meta)

    def _add(self, text: str, meta: dict[str, Any]) -> str:
        eid = engram_id(text)
        with self._lock:
            if self.collection.get(ids=[eid], include=[])["ids"]:
                return eid
            vector = self.embedder.embed_documents([text])[0]
            full = {**meta, "created_at": time.time(), "bad": False}
            if meta["kind"] == "episodic":
                full.update(self._pending.pop(meta["query_id"], {}))
                full["bad"] = ranking.is_bad(full)
            self.collection.add(ids=[eid], embeddings=[vector], documents=[text], metadatas=[full])
        return eid

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
            self.collection.update(ids=list(found["ids"]), metadatas=metas)
        return len(found["ids"])

    # -- reading --------------------------------------------------------------------------

    def recall(self, query: str, k: int = 5, *, include_bad: bool = False) -> list[MemoryHit]:
        """The ``k`` best memories for ``query`` by the ranking in :mod:`ranking`."""
        if not query.strip() or k <= 0:
            return []
        return self.recall_vector(self.embedder.embed_query(query), k, include_bad=include_bad)

    def recall_vector(
        self, vector: Sequence[float], k: int = 5, *, include_bad: bool = False
    ) -> list[MemoryHit]:
        """Recall by an already-embedded query (benchmarks, callers with their own vectors)."""
        total = self.collection.count()
        n = ranking.candidate_count(k, total)
        while n > 0:
            # No Chroma `where` here: a metadata filter turns HNSW search into a much slower
            # filtered scan (bench/memory.py: 179 ms vs 9 ms p50 at 50k). Bad engrams are
            # dropped while re-ranking, and the candidate pool grows if too many were bad.
            result = self.collection.query(
                query_embeddings=[list(vector)],
                n_results=n,
                include=["documents", "metadatas", "distances"],
            )
            rows = list(
                zip(
                    result["ids"][0],
                    (result["documents"] or [[]])[0],
                    (result["metadatas"] or [[]])[0],
                    (result["distances"] or [[]])[0],
                    strict=True,
                )
            )
            ranked = ranking.rank(rows, k, self.weights, time.time(), include_bad=include_bad)
            if len(ranked) >= k or n >= total or not rows:
                break
            if 1.0 - float(rows[-1][3]) < self.weights.min_similarity:
                break  # the rest are even less similar: a bigger pool would not help
            n = min(total, n * 4)
        else:
            return []
        return [_hit(c) for c in ranked]

    def get(self, engram_id: str) -> dict[str, Any] | None:
        found = self.collection.get(ids=[engram_id], include=["documents", "metadatas"])
        if not found["ids"]:
            return None
        return _engram(found["ids"][0], found["documents"][0], found["metadatas"][0])

    def list(self, limit: int = 50, offset: int = 0) -> list[dict[str, Any]]:
        """Engrams newest first (Chroma keeps insertion order; we read from the end)."""
        total = self.collection.count()
        end = max(0, total - max(offset, 0))
        start = max(0, end - max(limit, 0))
        if end <= start:
            return []
        found = self.collection.get(
            limit=end - start, offset=start, include=["documents", "metadatas"]
        )
        rows = [
            _engram(i, d, m)
            for i, d, m in zip(found["ids"], found["documents"], found["metadatas"], strict=True)
        ]
        return sorted(rows, key=lambda r: r.get("created_at", 0.0), reverse=True)

    def iter_all(self, include_embeddings: bool = False) -> Iterator[dict[str, Any]]:
        """Every engram, page by page, in insertion order."""
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
        with self._lock:
            if not self.collection.get(ids=[engram_id], include=[])["ids"]:
                return False
            self.collection.delete(ids=[engram_id])
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
        cls, settings: Settings, embedder: Embedder | None = None, batch: int = 64
    ) -> tuple[EngramStore, int]:
        """Re-embed every engram with ``embedder`` (default: the configured one).

        Everything is embedded before anything is replaced, and a JSON-lines backup is
        written to ``<data_dir>/memory_backup_<time>.jsonl`` first.
        """
        old = cls.open(settings, embedder=embedder or _NoEmbedder(), allow_mismatch=True)
        embedder = embedder or make_embedder(settings)
        old.export(Path(settings.data_dir) / f"memory_backup_{int(time.time())}.jsonl")
        rows = list(old.iter_all())
        vectors: list[list[float]] = []
        for i in range(0, len(rows), batch):
            vectors += embedder.embed_documents([r["content"] for r in rows[i : i + batch]])
        client = chroma_client(settings, "chroma")
        client.delete_collection(settings.memory.collection)
        new = cls.open(settings, embedder=embedder)
        limit = client.get_max_batch_size()
        for i in range(0, len(rows), limit):
            part = rows[i : i + limit]
            new.collection.add(
                ids=[r["id"] for r in part],
                embeddings=vectors[i : i + limit],
                documents=[r["content"] for r in part],
                metadatas=[_metadata_of(r) for r in part],
            )
        return new, len(rows)


class _NoEmbedder:
    """Placeholder used only to read a collection whose embedder is not available."""

    name = "none"
    scheme = "none"

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("this store was opened read-only for re-embedding")

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("this store was opened read-only for re-embedding")


_ENGRAM_KEYS = ("id", "content")


def _engram(eid: str, document: str | None, meta: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"id": eid, "content": document or "", **(meta or {})}


def _metadata_of(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in _ENGRAM_KEYS and v is not None}


def _hit(c: ranking.Candidate) -> MemoryHit:
    critic = c.meta.get("critic_score")
    reward = c.meta.get("reward")
    return MemoryHit(
        id=c.id,
        content=c.content,
        similarity=round(c.similarity, 4),
        age_s=round(c.age_s, 1),
        reward=float(reward) if reward is not None else None,
        critic_score=int(critic) if critic is not None else None,
        kind=str(c.meta.get("kind", "episodic")),
    )


def _collection_metadata(embedder: Embedder) -> dict[str, Any]:
    return {"embedder": embedder.name, "embedder_scheme": embedder.scheme}


def _existing_metadata(client: Any, name: str) -> dict[str, Any] | None:
    try:
        # embedding_function=None: never let Chroma attach its downloading default embedder.
        collection = client.get_collection(name, embedding_function=None)
    except NotFoundError:
        return None
    return dict(collection.metadata or {})


def _check_embedder(recorded: Mapping[str, Any], embedder: Embedder, name: str, where: Any) -> None:
    model, scheme = recorded.get("embedder"), recorded.get("embedder_scheme")
    if model is None or (model == embedder.name and scheme == embedder.scheme):
        return
    raise EmbedderMismatchError(
        f"memory collection {name!r} in {where} was built with embedding model {model!r} "
        f"(prefix scheme {scheme!r}) but the configured embedder is {embedder.name!r} "
        f"(prefix scheme {embedder.scheme!r}); vectors of two models cannot be mixed. "
        f"Run `local2 memory reembed` to re-embed every memory with the configured model, "
        f"or set memory.embedder back to the model that built it"
        + (" (is `ollama serve` running with that model pulled?)" if scheme == "nomic" else "")
    )
