"""A search of the person's own text, as every surface asks it (``local2 search``, ``GET
/search``, the MCP ``search`` tool): the same retrieval the tools use, answered as
:class:`~local2.contracts._search.SearchHits`.

- ``files``: the configured folders' index (``search_files``' hybrid search: BM25 and
  vectors fused, each hit's best passage for the query, with its page);
- ``documents``: the person's own documents (their index alone: never anyone else's);
- ``memory``: the person's memory, recalled as the model's ``recall_memory`` does;
- ``library``: what the person's research runs (and chat's fetches, by setting) read and
  kept (:mod:`local2.library`), each hit the original URL at its page.

The folders' index is brought up to date first as ``search_files`` brings it (waiting at
most ``files.index_wait_s``; a build still going: what is indexed so far); a document is
indexed when it is added.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from local2.contracts import (
    LibraryHit,
    MemoryHit,
    Person,
    SearchHit,
    SearchHits,
    SearchSource,
    Why,
)
from local2.errors import InvalidInput
from local2.service.desks._library import LibraryDesk
from local2.service.desks._memory import MemoryDesk

if TYPE_CHECKING:
    from local2.config import Settings
    from local2.files import Folders
    from local2.files import SearchHit as FileHit
    from local2.graph import Services

Recall = Callable[[Person, str, int], list[MemoryHit]]  # (person, query, k) -> their memories
# (person, query, k) -> the passages of their library
LibrarySearch = Callable[[Person, str, int | None], list[LibraryHit]]
MAX_K = 50


class Searcher:
    """Searches one person's own text at a time (``files``: the folders and the person's
    documents; ``recall``: their memory)."""

    def __init__(
        self,
        files: Folders | None,
        recall: Recall | None = None,
        wait_s: float = 0.0,
        library: LibrarySearch | None = None,
    ) -> None:
        self.files = files
        self.recall = recall
        self.library = library
        self.wait_s = wait_s  # how long a search waits for the folders' index to catch up

    def search(
        self, person: Person, query: str, within: SearchSource = "files", k: int = 5
    ) -> SearchHits:
        """The ``k`` best passages of ``within`` for ``query``, best first."""
        if not query.strip():
            raise InvalidInput("Nothing to search for: the query is empty.")
        if not 1 <= k <= MAX_K:
            raise InvalidInput(f"k is {k}: ask for 1 to {MAX_K} hits.")
        if within == "memory":
            hits = self._memory(person, query, k)
        elif within == "library" and self.library is not None:
            hits = [_shared(hit) for hit in self.library(person, query, k)]
        elif within in ("files", "documents"):
            hits = [_file_hit(within, h) for h in self._file_hits(person, query, within, k)]
        else:
            raise InvalidInput(
                f"Searching {within!r} is not offered here.",
                fix="Search files, documents, memory or library.",
            )
        return SearchHits(query=query, hits=hits)

    def _file_hits(self, person: Person, query: str, within: SearchSource, k: int) -> list[FileHit]:
        files = self.files
        if within == "files":
            if files is None or not files.configured:
                raise InvalidInput(
                    "No folders to search: none of files.roots is an existing folder.",
                    fix="Add folders to roots: in files.yaml, then run `local2 index`.",
                )
            files.index.refresh(self.wait_s)
            return files.index.search(query, k)
        library = files.own_documents if files is not None else None
        if library is None:
            raise InvalidInput(
                "Documents of your own are off on this server (documents.own: false).",
                fix="Set own: true in documents.yaml to add documents.",
            )
        if library.root(person.name) is None:
            return []  # no document of theirs yet
        return library.index(person.name).search(query, k)

    def _memory(self, person: Person, query: str, k: int) -> list[SearchHit]:
        if self.recall is None:
            raise InvalidInput("Memory is off.", fix="Turn memory on in memory.yaml.")
        found = self.recall(person, query, k)
        return [
            SearchHit(
                source="memory",
                path=hit["id"],
                page=None,
                score=round(float(hit["similarity"]), 4),
                passage=hit["content"],
                why=_why(vector_rank=rank),
            )
            for rank, hit in enumerate(found, start=1)
        ]


def _shared(hit: LibraryHit) -> SearchHit:
    """A library hit as the shared contract has it: where (the URL, its page), and its kept
    copy, when it was read and by which runs. A library hit is one already (the shared hit
    and the library's own fields): a copy of it, with a list of runs of its own."""
    return {**hit, "source": "library", "runs": list(hit["runs"])}


def _file_hit(source: SearchSource, hit: FileHit) -> SearchHit:
    return SearchHit(
        source=source,
        path=hit.path,
        page=hit.page,
        score=hit.score,
        passage=hit.passage,
        why=_why(hit.bm25_rank, hit.vector_rank, hit.linked_rank, hit.linked_from),
    )


def _why(
    bm25_rank: int | None = None,
    vector_rank: int | None = None,
    linked_rank: int | None = None,
    linked_from: str | None = None,
) -> Why:
    """Why a hit was found: its rank on each side (None: not found by it), and the best hit
    that names its file, when that is how it was found."""
    return {
        "bm25_rank": bm25_rank,
        "vector_rank": vector_rank,
        "linked_rank": linked_rank,
        "linked_from": linked_from,
        "reranked": False,
    }


def services_recall(services: Services) -> Recall:
    """Recall as the model's ``recall_memory`` does: the person's own memory and the
    team's facts (nothing when memory is off for them)."""

    def recall(person: Person, query: str, k: int) -> list[MemoryHit]:
        # lazy: local2.memory: ~4 ms, 1 module at MCP start
        from local2.memory import recall_with_team

        store = services.memory_for(person.name)
        if store is None:
            return []
        return recall_with_team(store, services.team_memory(), query, k)

    return recall


def open_searcher(settings: Settings) -> Searcher:
    """A searcher for a command that opens no agent (``local2 search``): the folders' index,
    each person's documents, and each person's memory opened for the search alone."""
    from local2.files import Folders  # lazy: local2.files: ~3 ms, 2 modules at MCP start

    def recall(person: Person, query: str, k: int) -> list[MemoryHit]:

        desk = MemoryDesk(settings, person)
        try:
            return desk.search(query, k)
        finally:
            desk.close()

    library = LibraryDesk(settings)
    memory = recall if settings.memory.enabled else None
    wait_s = settings.files.index_wait_s  # as search_files waits: a fresh index is built first
    return Searcher(Folders(settings), memory, wait_s, library.search)
