"""The MCP ``search`` tool's one call into the service: the person's documents, the shared
folders and their memory.

The service's one search of a person's own text (``agent.searcher.search(person, query, within,
k)``: hybrid, each hit saying why it was found, what ``local2 search`` shows), one source at
a time. The sources' scores are on different scales (a fused rank score, a similarity), so
their hits are merged by rank: each source's best, then each one's second, and so on.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from local2.contracts import Person, SearchHit, SearchHits, SearchSource
from local2.errors import InvalidInput, Unavailable

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent

EVERYWHERE: tuple[SearchSource, ...] = ("documents", "files", "memory", "library")


def search_own(
    agent: Agent,
    person: Person,
    query: str,
    within: Collection[SearchSource] | None = None,
    k: int = 8,
) -> SearchHits:
    """The best ``k`` passages of ``person``'s own text for ``query``."""
    ranked: list[tuple[int, int, SearchHit]] = []
    for order, source in enumerate(within or EVERYWHERE):
        try:
            found = agent.searcher.search(person, query, source, k)["hits"]
        except (InvalidInput, Unavailable):
            if within:  # asked for by name: said why not
                raise
            continue  # everywhere: a source that is off here (memory, own documents) is left out
        ranked += [(rank, order, hit) for rank, hit in enumerate(found)]
    ranked.sort(key=lambda item: (item[0], item[1]))
    return {"query": query, "hits": [hit for _, _, hit in ranked[:k]]}
