"""Whose memory: each person's engrams in collections and queue files of their own.

Owner ``local`` (one person, no people configured) keeps exactly the names of before: the
collection family ``<memory.collection>`` and the queue files as they were. Anyone else's
names add a key made of a readable slug of the name and a short hash of the exact name, so
two names a slug would merge ("a.b", "a_b", "A-B") never share a collection.

The key never contains a dot: ``<memory.collection>.<x>`` is how the embedder collections of
one family are found (:func:`local2.memory.per_embedder.family`), so ``engrams-bob-1a2b...``
can never be taken for a collection of local's ``engrams`` family, nor one person's family
for another's.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from local2.contracts.people import LOCAL_NAME

SLUG_CHARS = 40  # enough to read a name in `chroma` listings; the hash tells names apart
HASH_CHARS = 10


def is_local(owner: str | None) -> bool:
    """Whether ``owner`` is the one person of a server nobody signs in to (None: from
    before owners, so local's)."""
    return not owner or owner == LOCAL_NAME


def owner_key(owner: str) -> str:
    """``bob-3f9c0a1b2d``: a slug of the name (``[a-z0-9-]``) and a hash of the exact name."""
    slug = re.sub(r"[^a-z0-9]+", "-", owner.lower()).strip("-")[:SLUG_CHARS].strip("-")
    digest = hashlib.sha256(owner.encode("utf-8")).hexdigest()[:HASH_CHARS]
    return f"{slug or 'person'}-{digest}"


def collection_base(base: str, owner: str | None) -> str:
    """The base name of ``owner``'s collection family: ``base`` itself for local, else
    ``<base>-<key>`` (Chroma names: ``[a-zA-Z0-9._-]``, alphanumeric at both ends)."""
    return base if is_local(owner) else f"{base}-{owner_key(owner or '')}"


def owner_file(path: str | Path, owner: str | None) -> Path:
    """``owner``'s own copy of a queue file: ``memory_retry.jsonl`` for local,
    ``memory_retry.<key>.jsonl`` for anyone else."""
    path = Path(path)
    if is_local(owner):
        return path
    return path.with_name(f"{path.stem}.{owner_key(owner or '')}{path.suffix}")
