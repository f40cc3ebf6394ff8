"""A person's memory as the memory commands manage it (``local2 memory``): save, list,
search, delete, export and re-embed their own engrams, or the team's shared facts.

Each desk acts on one person's behalf (:class:`~local2.contracts._people.Person`): their own
engrams only, so someone else's engram id is as unknown as one that never existed. With
``team`` it acts on the team's shared facts (:mod:`local2.memory._shelf`) instead: anyone
reads them, but only local or an admin may save, delete or re-embed one
(:func:`~local2.contracts._people.may_write_team_facts`); anyone else's write is refused
before anything is opened, so a refused write creates no team collection.

The store is opened on first use, without background re-embedding (a short command:
:meth:`MemoryDesk.reembed` does it, and so does the next agent). Nothing here needs the
graph, so the commands start without LangGraph.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local2.config import Settings
from local2.contracts import TEAM_NAME, Person, may_write_team_facts
from local2.errors import InvalidInput

if TYPE_CHECKING:
    from local2.contracts import MemoryHit
    from local2.memory import EngramStore

SAVED_FROM = "cli"  # the ``source`` of an engram the person saved through a desk


@dataclass(frozen=True)
class Reembedded:
    """What :meth:`MemoryDesk.reembed` did: how many engrams it embedded, with which
    embedder, and how many the collection holds now."""

    embedded: int
    embedder: str
    stored: int
    collection: str


class MemoryDesk:
    """One person's memory (or, ``team``, the team's shared facts) for the memory commands."""

    def __init__(self, settings: Settings, person: Person, *, team: bool = False) -> None:
        self.settings = settings
        self.person = person
        self.team = team
        self.owner = TEAM_NAME if team else person.name
        self._store: EngramStore | None = None
        self._team: EngramStore | None = None  # the team's facts beside the person's own
        self._team_looked = False

    @property
    def notice(self) -> str | None:
        """What the person must be told about the store once it is open (a fallback
        embedder), else None."""
        return self._store.notice if self._store is not None else None

    @property
    def store(self) -> EngramStore:
        if self._store is None:
            from local2.memory import EngramStore  # chromadb: seconds to import

            self._store = EngramStore.open(self.settings, sync="no", owner=self.owner)
        return self._store

    def close(self) -> None:
        for store in (self._team, self._store):
            if store is not None:
                store.close()
        self._store = self._team = None
        self._team_looked = False

    # -- writing ---------------------------------------------------------------------------

    def save(self, text: str) -> str:
        """Remember ``text``: an engram of the person's own, or a team fact; its id."""
        if not text.strip():
            raise InvalidInput("Nothing to save: TEXT is empty.", 'e.g. local2 memory save "..."')
        self._check_write()
        from local2.memory import TEAM_SOURCE  # lazy: local2.memory: ~2 ms, 1 module at MCP start

        store = self.store
        engram = store.save(text, session_id="", query_id="")
        store.mark(
            engram, source=TEAM_SOURCE if self.team else SAVED_FROM, written_by=self.person.name
        )
        return engram

    def delete(self, engram_id: str) -> bool:
        """Forget one engram; False when there is no such engram here (someone else's is not
        here either)."""
        self._check_write()
        return self.store.delete(engram_id)

    def reembed(
        self, rebuild: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> Reembedded:
        """Bring the configured embedder's collection up to date with every engram (or, with
        ``rebuild``, embed them all again after a backup)."""
        self._check_write()
        # lazy: chromadb, numpy, local2.memory: ~583 ms, 572 modules at MCP start
        from local2.memory import EngramStore

        store, embedded = EngramStore.reembed(
            self.settings, owner=self.owner, rebuild=rebuild, progress=progress
        )
        self.close()
        self._store = store
        return Reembedded(embedded, store.embedder.name, store.count(), store.collection.name)

    # -- reading ---------------------------------------------------------------------------

    def engrams(
        self, limit: int = 50, offset: int = 0, kind: str | None = None
    ) -> list[dict[str, Any]]:  # each id, content and its Chroma metadata
        """Engrams newest first (of one ``kind``: fact, episodic or saved)."""
        return self.store.list(limit=limit, offset=offset, kind=kind)

    def count(self) -> int:
        return self.store.count()

    def search(self, query: str, k: int = 5, include_bad: bool = False) -> list[MemoryHit]:
        """Recall for ``query`` with the ranking the model's recall uses: the person's own
        engrams and the team's facts (``kind: team``), or with ``team`` the team's alone."""
        # lazy: local2.memory: ~2 ms, 1 module at MCP start
        from local2.memory import as_team, recall_with_team

        store = self.store
        if self.team:
            return as_team(store.recall(query, k, include_bad=include_bad))
        return recall_with_team(store, self._team_beside(), query, k, include_bad=include_bad)

    # each hit over its engram's row (id, content and its Chroma metadata)
    def stored(self, hits: list[MemoryHit]) -> list[dict[str, Any]]:
        """Each hit with its engram as stored (the turn, when, where a fact came from): what
        a table of hits shows."""
        from local2.memory import TEAM_KIND  # lazy: local2.memory: ~2 ms, 1 module at MCP start

        team = None if self.team else self._team_beside()
        rows = []
        for hit in hits:
            source = team if hit["kind"] == TEAM_KIND and team is not None else self.store
            rows.append({**(source.get(hit["id"]) or {}), **hit})
        return rows

    def export(self, path: Path) -> int:
        """Write every engram (content and metadata) to ``path`` as JSON lines; how many."""
        return self.store.export(path)

    def _team_beside(self) -> EngramStore | None:
        """The team's facts beside the person's own store when there are any (never created
        by looking), as every turn's recall has them."""
        if not self._team_looked:
            # lazy: chromadb, numpy, local2.memory: ~616 ms, 573 modules at MCP start
            from local2.memory import EngramStore, TeamFacts

            own = self.store

            def team() -> EngramStore:
                return EngramStore.open(
                    own.settings, own.embedder, sync="no", owner=TEAM_NAME, owns_embedder=False
                )

            self._team = TeamFacts(own.settings, team).recallable()
            self._team_looked = True
        return self._team

    def _check_write(self) -> None:
        if self.team and not may_write_team_facts(self.person):
            raise InvalidInput(
                "Only local (this terminal without --as) or an admin may change the team's "
                "shared facts: they are recalled in everyone's turns, and "
                f"'{self.person.name}' is not an admin.",
                "Run it without --as, or --as an admin (local2 users add NAME --admin); or "
                "leave out --team to keep it in your own memory.",
            )
