"""The MCP ``search`` tool's one call into the service: the person's documents, the shared
folders and their memory.

The service's one search of a person's own text (``Agent.search(person, query, within,
k)``: hybrid, each hit saying why it was found, what ``local2 search`` shows), one source at
a time, the hits merged best first.
"""

from __future__ import annotations

from collections.abc import Collection

from local2.contracts import Person, SearchHit, SearchHits, SearchSource
from local2.errors import InvalidInput, Unavailable
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
    hits: list[SearchHit] = []
    for source in within or EVERYWHERE:
        try:
            hits += agent.search(person, query, source, k)["hits"]
        except (InvalidInput, Unavailable):
            if within:  # asked for by name: said why not
                raise
            # everywhere: a source that is off here (memory, own documents) is left out
    hits.sort(key=lambda hit: -hit["score"])
    return {"query": query, "hits": hits[:k]}
