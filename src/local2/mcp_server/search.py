"""The MCP ``search`` tool's one call into the service: the person's documents, the shared
folders and their memory.

The service's one search of a person's own text (``Agent.search(person, query, within,
k)``, DESIGN §16: hybrid, each hit saying why it was found) is used when the agent has it,
one source at a time, the hits merged best first; until then
:class:`local2.service.OwnText` answers (vector search of the same indexes and recall).
"""

from __future__ import annotations

from collections.abc import Collection

from local2.contracts import Person, SearchHit, SearchHits, SearchSource
from local2.errors import InvalidInput, Unavailable
from local2.service import Agent, own_text_of

EVERYWHERE: tuple[SearchSource, ...] = ("documents", "files", "memory")


def search_own(
    agent: Agent,
    person: Person,
    query: str,
    within: Collection[SearchSource] | None = None,
    k: int = 8,
) -> SearchHits:
    """The best ``k`` passages of ``person``'s own text for ``query``."""
    one_search = getattr(agent, "search", None)
    if one_search is None:
        return own_text_of(agent).search(person, query, within, k)
    hits: list[SearchHit] = []
    for source in within or EVERYWHERE:
        try:
            hits += one_search(person, query, source, k)["hits"]
        except (InvalidInput, Unavailable):
            if within:  # asked for by name: said why not
                raise
            # everywhere: a source that is off here (memory, own documents) is left out
    hits.sort(key=lambda hit: -hit["score"])
    return {"query": query, "hits": hits[:k]}
