"""The MCP ``search`` tool's one call into the service: the person's documents, the shared
folders and their memory (:class:`local2.service.OwnText`). When the service has one search
of the person's own text for everyone (``Agent.search``, DESIGN §16) this is the line to
point at it."""

from __future__ import annotations

from collections.abc import Collection

from local2.contracts.people import Person
from local2.contracts.search import SearchHits, SearchSource
from local2.service import own_text_of
from local2.service.agent import Agent


def search_own(
    agent: Agent,
    person: Person,
    query: str,
    within: Collection[SearchSource] | None = None,
    k: int = 8,
) -> SearchHits:
    """The best ``k`` passages of ``person``'s own text for ``query``."""
    return own_text_of(agent).search(person, query, within, k)
