"""The team's shared facts: written on purpose, recalled for everyone beside their own.

Team facts are engrams of the reserved owner :data:`~local2.contracts._people.TEAM_NAME`, a
collection family of their own (:mod:`local2.memory.owners`), written only by
``local2 memory save --team`` (local or an admin; :func:`~local2.contracts._people.
may_write_team_facts`). Nothing a turn or the model does writes them: every write path of a
turn goes to its owner's store (``Services.memory_for``), and the shelf refuses the team's
name as an owner (:meth:`local2.memory.shelf.MemoryShelf.of`).

Each recall searches the person's own store and, when the team has facts, the team's, by the
same query vector, and merges the hits by similarity; a team hit says so (``kind: "team"``).

Usually there are none, and a turn must not pay a second Chroma query for nothing. Whether
there are is looked at no more than once every :data:`TEAM_CHECK_S` seconds
(:class:`TeamFacts`): first whether the team's collections exist at all (so an install that
never wrote one never creates them), then their count. The facts are written by the CLI in
another process, so a new first fact reaches recall within that time. (On embedded Chroma a
process does not see vectors another process added to a collection it has already loaded:
facts written after the server first found some are recalled after its restart; a Chroma
server has no such limit.)
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from local2.contracts import TEAM_NAME
from local2.memory.owners import collection_base, legacy_collection_base

if TYPE_CHECKING:
    from local2.contracts import MemoryHit
    from local2.memory.store import EngramStore

log = logging.getLogger(__name__)

TEAM_CHECK_S = 30.0  # how stale "the team has no facts" may be (they are written elsewhere)
TEAM_KIND = "team"  # a recalled team fact's ``kind`` (the engram itself is a ``saved`` one)
TEAM_SOURCE = "team"  # the stored engram's ``source``


class TeamFacts:
    """The team's store for recall, and whether it holds any facts, looked at no more than
    once every ``check_s`` seconds (thread-safe). Never creates the team's collections:
    ``open_store`` is called only once they exist."""

    def __init__(
        self,
        settings: Any,
        open_store: Callable[[], EngramStore],
        *,
        check_s: float = TEAM_CHECK_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.check_s = check_s
        self._open_store = open_store
        self._clock = clock
        self._client: Any = None
        self._store: EngramStore | None = None
        self._has_facts = False
        self._checked_at = -math.inf
        self._lock = threading.Lock()
        self.looks = 0  # how many times Chroma was asked (tests and benchmarks read it)

    def recallable(self) -> EngramStore | None:
        """The team's store when it has facts, else None; no Chroma call between looks."""
        if self._clock() - self._checked_at >= self.check_s:
            with self._lock:
                if self._clock() - self._checked_at >= self.check_s:
                    self._has_facts = self._look()
                    self._checked_at = self._clock()
        return self._store if self._has_facts else None

    def forget(self) -> None:
        """Look again at the next recall (this process just wrote or deleted one)."""
        self._checked_at = -math.inf

    def _look(self) -> bool:
        self.looks += 1
        try:
            if self._store is None:
                if not self._written():
                    return False
                self._store = self._open_store()
            return self._store.count() > 0
        except Exception as exc:  # recall goes on with the person's own memory
            log.warning("team facts unavailable: %s: %s", type(exc).__name__, exc)
            return False

    def _written(self) -> bool:
        """Whether any collection of the team's family exists (without creating one; its
        name under the short key of before counts too: opening the store moves it)."""
        from local2.memory import per_embedder  # chromadb: only once memory is in use
        from local2.memory.chroma import chroma_client

        if self._client is None:
            self._client = chroma_client(self.settings, "chroma")
        memory = self.settings.memory.collection
        bases = (collection_base(memory, TEAM_NAME), legacy_collection_base(memory, TEAM_NAME))
        return any(per_embedder.family(self._client, base) for base in bases if base)

    def opened(self) -> EngramStore | None:
        """The team's store if this process opened it (for closing)."""
        return self._store

    def release(self) -> None:
        """Let go of the client that looked for the team's collections."""
        from local2.memory.chroma import release_client

        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            release_client(client)


def as_team(hits: Sequence[MemoryHit]) -> list[MemoryHit]:
    """Team hits, marked as such for the model, the app and the CLI."""
    return [{**hit, "kind": TEAM_KIND} for hit in hits]


def merged(own: list[MemoryHit], team: list[MemoryHit], k: int) -> list[MemoryHit]:
    """The person's hits and the team's, most similar first, at most ``k``; with no team
    hits the person's exactly as recalled. An engram both hold (same text, same id) is
    shown once, as the person's own."""
    if not team:
        return own
    mine = {hit["id"] for hit in own}
    both = own + [hit for hit in team if hit["id"] not in mine]
    return sorted(both, key=lambda hit: hit["similarity"], reverse=True)[:k]


def recall_with_team(
    store: EngramStore,
    team: EngramStore | None,
    query: str,
    k: int,
    *,
    kinds: Collection[str] | None = None,
    **options: Any,
) -> list[MemoryHit]:
    """``store``'s best ``k`` for ``query`` merged with ``team``'s (None: the team has no
    facts; then exactly ``store.recall``). One query embedding when both share the embedder
    (the shelf's stores do). ``kinds`` limits the person's own kinds only: every team fact
    is meant to be recalled. A failing team search leaves the person's own hits."""
    if team is None:
        return store.recall(query, k, kinds=kinds, **options)
    if not query.strip() or k <= 0:
        return []
    vector = store.embedder.embed_query(query)
    own = store.recall_vector(vector, k, kinds=kinds, **options)
    try:
        shared_vector = (
            vector if team.embedder is store.embedder else team.embedder.embed_query(query)
        )
        shared = as_team(team.recall_vector(shared_vector, k, **options))
    except Exception as exc:
        log.warning("team facts not recalled: %s: %s", type(exc).__name__, exc)
        shared = []
    return merged(own, shared, k)
