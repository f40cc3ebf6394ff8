"""Where each owner's memory lives: whose collections and queue files are whose (owner
``local`` keeps the names of before), the memory work that waits in a JSON-lines file shared
by processes, and the Chroma that memory and the file index talk to (embedded on disk, or a
server). Nothing here imports chromadb until a client is asked for.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Generic, TypeVar, cast
from urllib.parse import urlsplit

from local2.contracts import LOCAL_NAME
from local2.errors import ChromaUnavailable

# --- owners -----------------------------------------------------------------------------
# Whose memory: each person's engrams in collections and queue files of their own.
#
# Owner ``local`` (one person, no people configured) keeps exactly the names of before: the
# collection family ``<memory.collection>`` and the queue files as they were. Anyone else's
# names add a key made of a readable slug of the name and the full SHA-256 of the exact name,
# so two names a slug would merge ("a.b", "a_b", "A-B") never share a collection, and no name
# can be chosen to share someone else's (a proxy may pass names people pick themselves).
#
# Keys used to carry 10 hex digits of that hash (40 bits: a colliding name can be searched
# for). Those names are moved to the full key the first time their owner's memory is opened
# (:func:`legacy_key`; :func:`local2.memory._store.adopt_family` for collections,
# :func:`owner_file` for queue files), once, and logged.
#
# The key never contains a dot: ``<memory.collection>.<x>`` is how the embedder collections of
# one family are found (:func:`local2.memory._store.family`), so ``engrams-bob-1a2b...``
# can never be taken for a collection of local's ``engrams`` family, nor one person's family
# for another's.

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


# --- jsonl_queue ------------------------------------------------------------------------
# Memory work that waits: a JSON-lines file under the data directory, shared by processes.
#
# Two kinds of work wait here: a turn whose ingest failed (``memory_retry.jsonl``, retried
# before the next ingest) and an annotation asked for while memory was not open
# (``memory_annotations.jsonl``, :mod:`local2.memory.deferred`). Any process appends; whichever
# has memory open drains.
#
# An append is one line written under a short file lock. A drain takes the same lock only to
# move the file aside (``<name>.draining``), so a line appended meanwhile starts a new file and
# is never lost, then does the work without holding it: an append never waits for Chroma or an
# embedding server. What a drain leaves undone (the store failed again) goes back to the head
# of the queue; what a drain that died part-way left in the moved-aside file goes first in the
# next drain: the order is kept. Doing a record twice must be harmless: a drain that dies
# after the work but before recording it repeats it.

# A record of the queue: what its writer appends, and what a line read back is taken for once
# ``valid`` has accepted it.
Record = TypeVar("Record", bound=Mapping[str, Any])
LOCK_TIMEOUT_S = 10.0


def _any(record: Mapping[str, Any]) -> bool:
    return True


class JsonlQueue(Generic[Record]):
    """Records waiting in ``path``, oldest first; see the module's docstring for the rules."""

    def __init__(
        self,
        path: str | Path,
        *,
        valid: Callable[[Mapping[str, Any]], bool] = _any,  # a line's JSON object, unchecked
        lock_timeout_s: float = LOCK_TIMEOUT_S,
    ) -> None:
        self.path = Path(path)
        self.draining = self.path.with_name(self.path.name + ".draining")
        self.valid = valid
        self.lock_timeout_s = lock_timeout_s
        self._append_lock = self.path.with_name(f".{self.path.name}.lock")
        self._drain_lock = self.path.with_name(f".{self.path.name}.drain.lock")
        self._one_drain = threading.Lock()  # threads of one process (file locks are per fd)

    def waiting(self) -> bool:
        """Whether anything is queued: two ``stat`` calls, cheap enough before every recall."""
        return self.path.exists() or self.draining.exists()

    def append(self, record: Record) -> None:
        """Queue ``record``. Raises :class:`OSError` if it cannot be written (a lock that
        is not released within ``lock_timeout_s`` raises :class:`TimeoutError`, one too)."""
        line = json.dumps(record, ensure_ascii=False) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._locked(self._append_lock), self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)

    def drain(
        self,
        apply: Callable[[Record], object],
        *,
        compact: Callable[[list[Record]], list[Record]] | None = None,
    ) -> int:
        """Apply the queued records oldest first (after ``compact``, if given); returns how
        many were applied. The first failure is raised; it and the records after it stay
        queued for the next drain."""
        if not self.waiting():  # the usual case: no lock taken, nothing imported
            return 0
        done = 0
        with self._one_drain, self._locked(self._drain_lock):
            for _ in range(2):  # what an earlier drain left, then what is queued now
                if not self.draining.exists() and not self._move_aside():
                    break
                records = self.read(self.draining)
                if compact is not None:
                    records = compact(records)
                applied = 0
                try:
                    for record in records:
                        apply(record)
                        applied += 1
                finally:
                    self._keep(records[applied:])
                    done += applied
        return done

    def read(self, path: Path | None = None) -> list[Record]:
        """The valid records in ``path`` (default: the queue); a malformed line is dropped."""
        try:
            lines = (path or self.path).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        records: list[Record] = []
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            if isinstance(record, dict) and self.valid(record):
                records.append(cast(Record, record))  # a JSON object its check accepted
            else:
                log.warning("%s: dropping a malformed line", self.path.name)
        return records

    def _move_aside(self) -> bool:
        with self._locked(self._append_lock):
            try:
                os.replace(self.path, self.draining)
            except FileNotFoundError:
                return False
        return True

    def _keep(self, records: list[Record]) -> None:
        """Put what is left undone back at the head of the queue, before what was appended
        meanwhile, then drop the moved-aside file (dying in between repeats some work)."""
        if records:
            with self._locked(self._append_lock):
                lines = [json.dumps(r, ensure_ascii=False) + "\n" for r in records]
                with suppress(FileNotFoundError):
                    lines.append(self.path.read_text(encoding="utf-8"))
                tmp = self.path.with_name(self.path.name + ".tmp")
                tmp.write_text("".join(lines), encoding="utf-8")
                tmp.replace(self.path)
        self.draining.unlink(missing_ok=True)

    @contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        from filelock import FileLock  # a few ms to import: only when the queue is used

        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(path, timeout=self.lock_timeout_s):
            yield


# --- chroma -----------------------------------------------------------------------------
# Which Chroma memory and the file index talk to: embedded on disk, or a Chroma server.
#
# Embedded (the default) keeps each collection's directory under the data directory; one
# process at a time may open it. A team shares a Chroma server instead (``chroma run --path
# DIR --port 8000``, ``memory.chroma_url: http://host:8000``), which any number of LoCAL2
# processes can use at once. A token, if the server wants one, comes from
# ``LOCAL2_CHROMA_TOKEN``. This is the only place that chooses.

TOKEN_ENV = "LOCAL2_CHROMA_TOKEN"


def chroma_client(settings: Any, subdir: str) -> Any:
    """A Chroma client: ``HttpClient`` for ``memory.chroma_url``, else a persistent directory
    ``<data_dir>/<subdir>``."""
    # lazy: chromadb, numpy: ~605 ms, 563 modules at MCP start
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    url = settings.memory.chroma_url
    if not url:
        path = Path(settings.data_dir) / subdir
        path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=chroma_settings)
    parts = urlsplit(url if "://" in url else f"http://{url}")
    ssl = parts.scheme == "https"
    token = os.environ.get(TOKEN_ENV)
    try:
        return chromadb.HttpClient(
            host=parts.hostname or "127.0.0.1",
            port=parts.port or (443 if ssl else 8000),
            ssl=ssl,
            headers={"Authorization": f"Bearer {token}"} if token else None,
            settings=chroma_settings,
        )
    except ValueError as exc:  # chromadb's "Could not connect to a Chroma server"
        raise ChromaUnavailable(
            f"Cannot reach the Chroma server at {url} ({exc}). Start it with "
            "`chroma run --path DIR --port PORT`, or unset memory.chroma_url for embedded."
        ) from exc


def release_client(client: Any) -> None:
    """Let go of a client's files and connections (chromadb's ``close``, 1.5 on): an
    embedded client otherwise keeps its SQLite and index files open for the life of the
    process, one set per client made. The directory stays open while other clients of the
    same path are."""
    closing = getattr(client, "close", None)
    if closing is not None:
        try:
            closing()
        except Exception as exc:  # closing is tidying up: never the reason a close fails
            log.debug("chroma client close: %s", exc)


def vectors(rows: Sequence[Sequence[float]]) -> list[Sequence[float]]:
    """Embeddings as Chroma's API types them (its union of arrays and sequences defeats the
    type checker's inference of a plain list of lists)."""
    return list(rows)
