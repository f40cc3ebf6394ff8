"""Each person's memory: an engram store of their own, opened when first needed.

Memory is per person: what Alice told LoCAL2 must never be recalled for Bob. Each owner's
engrams are a collection family of their own (:mod:`local2.memory.owners`), not rows of one
collection told apart by a metadata filter: a Chroma ``where`` on recall turns the HNSW
search into a filtered scan (see :meth:`EngramStore.recall_vector
<local2.memory.store.EngramStore.recall_vector>`), and separate collections keep people
apart by construction (a bug in a filter cannot leak what a query never reaches).

Local's store is the one opened at start (``services.memory``); another person's is opened
on the same Chroma (embedded directory or server) with the same embedder, not loaded again,
the first time their memory is needed, and kept until :meth:`MemoryShelf.close`.

The team's shared facts (:mod:`local2.memory.team`) are on the shelf too, but never as an
owner's: :meth:`MemoryShelf.of` refuses the team's name, so nothing that writes a person's
memory (a turn's facts, ``save_memory``, ingest, ratings) can reach them;
:meth:`MemoryShelf.team_facts` gives them for recall only.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import TYPE_CHECKING

from local2.contracts import TEAM_NAME
from local2.errors import MemoryStoreError
from local2.memory.owners import is_local
from local2.memory.team import TeamFacts

if TYPE_CHECKING:  # chromadb takes seconds to import: only when memory is opened
    from local2.memory.store import EngramStore

log = logging.getLogger(__name__)


class MemoryShelf:
    """Every owner's engram store around local's ``local`` (thread-safe; opened lazily)."""

    def __init__(self, local: EngramStore) -> None:
        self.local = local
        self._stores: dict[str, EngramStore] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.team = TeamFacts(local.settings, self._open_team)

    @classmethod
    def around(cls, memory: object) -> MemoryShelf | None:
        """A shelf around a real engram store; None for anything else (off, or a test's
        stand-in: other people then have no memory rather than a shared one)."""
        store_module = sys.modules.get("local2.memory.store")  # not imported: not a store
        if store_module is None or not isinstance(memory, store_module.EngramStore):
            return None
        return cls(memory)

    def of(self, owner: str | None) -> EngramStore:
        """``owner``'s store (None or ``local``: local's). Raises what opening raises
        (:class:`~local2.errors.MemoryStoreError`, a Chroma error), and nothing is kept:
        the next call tries again."""
        if is_local(owner):
            return self.local
        name = str(owner)
        if name == TEAM_NAME:  # e.g. a proxy naming someone "team": no memory, not the team's
            raise MemoryStoreError(
                f"'{TEAM_NAME}' is the team's shared facts, not a person's memory",
                "team facts are written with `local2 memory save --team` by local or an admin",
            )
        with self._lock:
            self._check_open()
            store = self._stores.get(name)
            if store is None:
                store = self._stores[name] = self._open(name)
        return store

    def team_facts(self) -> EngramStore | None:
        """The team's shared facts for recall, or None when there are none (looked at no
        more than every :data:`~local2.memory.team.TEAM_CHECK_S` seconds)."""
        with self._lock:
            self._check_open()
        return self.team.recallable()

    def _check_open(self) -> None:
        if self._closed:
            raise MemoryStoreError("memory is closed: the app is shutting down", "start it again")

    def _open_team(self) -> EngramStore:
        with self._lock:
            self._check_open()
        return self._open(TEAM_NAME)

    def _open(self, name: str) -> EngramStore:
        """``name``'s store on local's Chroma, with local's embedder (not loaded again)."""
        from local2.memory.store import EngramStore

        store = EngramStore.open(
            self.local.settings, self.local.embedder, owner=name, owns_embedder=False
        )
        log.info("memory: opened %s's engrams (%s)", name, store.collection.name)
        return store

    def opened(self) -> list[str]:
        """The people whose memory is open here, besides local."""
        with self._lock:
            return sorted(self._stores)

    def close(self) -> None:
        """Close every person's store but local's (its opener closes it, and the embedder
        they all share)."""
        with self._lock:
            self._closed = True
            stores, self._stores = list(self._stores.values()), {}
            team = self.team.opened()
            if team is not None:
                stores.append(team)
        for store in stores:
            try:
                store.close()
            except Exception as exc:  # closing the rest matters more
                log.warning("memory: closing %s's store failed: %s", store.owner, exc)
        self.team.release()
