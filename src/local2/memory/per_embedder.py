"""One Chroma collection per embedder, kept in step: the consistent fallback of memory.

Vectors of two embedding models (or two prefix schemes) cannot be compared, so each embedder
has its own collection, named ``<memory.collection>.<embedder>`` and recording the model and
prefix scheme in its metadata. The engrams are the same in every collection (same ids, text
and metadata); only the vectors differ. A collection that lacks engrams another one holds is
brought up to date by re-embedding their text (:func:`copy_missing`): in the background when
memory falls back, at once with ``local2 memory reembed``. A collection from before this
scheme (named just ``<memory.collection>``) is renamed on first open.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chromadb.api.models.Collection import Collection
from chromadb.errors import NotFoundError

from local2.errors import EmbedderMismatchError
from local2.memory.chroma import vectors as chroma_vectors
from local2.memory.embeddings import Embedder

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
    :func:`local2.memory.owners.legacy_collection_base`). Nothing moves while ``base``'s
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
