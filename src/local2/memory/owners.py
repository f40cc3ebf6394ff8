"""Whose memory: each person's engrams in collections and queue files of their own.

Owner ``local`` (one person, no people configured) keeps exactly the names of before: the
collection family ``<memory.collection>`` and the queue files as they were. Anyone else's
names add a key made of a readable slug of the name and the full SHA-256 of the exact name,
so two names a slug would merge ("a.b", "a_b", "A-B") never share a collection, and no name
can be chosen to share someone else's (a proxy may pass names people pick themselves).

Keys used to carry 10 hex digits of that hash (40 bits: a colliding name can be searched
for). Those names are moved to the full key the first time their owner's memory is opened
(:func:`legacy_key`; :func:`local2.memory.per_embedder.adopt_family` for collections,
:func:`owner_file` for queue files), once, and logged.

The key never contains a dot: ``<memory.collection>.<x>`` is how the embedder collections of
one family are found (:func:`local2.memory.per_embedder.family`), so ``engrams-bob-1a2b...``
can never be taken for a collection of local's ``engrams`` family, nor one person's family
for another's.
"""

from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

from local2.contracts import LOCAL_NAME

log = logging.getLogger(__name__)

SLUG_CHARS = 40  # enough to read a name in `chroma` listings; the hash tells names apart
LEGACY_HASH_CHARS = 10  # the keys of before: 40 bits


def is_local(owner: str | None) -> bool:
    """Whether ``owner`` is the one person of a server nobody signs in to (None: from
    before owners, so local's)."""
    return not owner or owner == LOCAL_NAME


def _slug(owner: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", owner.lower()).strip("-")[:SLUG_CHARS].strip("-")
    return slug or "person"


def _digest(owner: str) -> str:
    return hashlib.sha256(owner.encode("utf-8")).hexdigest()


def owner_key(owner: str) -> str:
    """``bob-81b637d8...`` (64 hex digits): a slug of the name (``[a-z0-9-]``) and the full
    SHA-256 of the exact name."""
    return f"{_slug(owner)}-{_digest(owner)}"


def legacy_key(owner: str) -> str:
    """The key ``owner``'s names had before: the slug and 10 hex digits of the hash."""
    return f"{_slug(owner)}-{_digest(owner)[:LEGACY_HASH_CHARS]}"


def owner_folder(owner: str | None) -> str:
    """A folder name of ``owner``'s own (``local``, else :func:`owner_key`, which always
    ends in a hash and so is never ``local``)."""
    return LOCAL_NAME if is_local(owner) else owner_key(owner or "")


def collection_base(base: str, owner: str | None) -> str:
    """The base name of ``owner``'s collection family: ``base`` itself for local, else
    ``<base>-<key>`` (Chroma names: ``[a-zA-Z0-9._-]``, alphanumeric at both ends)."""
    return base if is_local(owner) else f"{base}-{owner_key(owner or '')}"


def legacy_collection_base(base: str, owner: str | None) -> str | None:
    """The base name ``owner``'s collection family had before (None: local's never moved)."""
    return None if is_local(owner) else f"{base}-{legacy_key(owner or '')}"


def owner_file(path: str | Path, owner: str | None) -> Path:
    """``owner``'s own copy of a queue file: ``memory_retry.jsonl`` for local,
    ``memory_retry.<key>.jsonl`` for anyone else. A copy under the legacy key (and none
    under the full one) is renamed to it first."""
    path = Path(path)
    if is_local(owner):
        return path
    name = owner or ""
    own = path.with_name(f"{path.stem}.{owner_key(name)}{path.suffix}")
    legacy = path.with_name(f"{path.stem}.{legacy_key(name)}{path.suffix}")
    if legacy.exists() and not own.exists():
        try:
            legacy.rename(own)
        except FileNotFoundError:
            return own  # another process moved it first
        log.warning("memory: %s moved to %s (keys now carry the full hash)", legacy, own.name)
    return own
