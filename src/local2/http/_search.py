"""``GET /search?q=&in=&k=``: a search of the caller's own text (the folders, their
documents, their memory or their library), answered as
:class:`~local2.contracts._search.SearchHits`, as ``local2 search --json`` prints it (a
library hit also names its kept copy, when it was read and by which runs). Each request is
one person's: their documents, memory and library only."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool

from local2.contracts import SearchHits
from local2.http._identity import Caller
from local2.http._openapi import returns
from local2.service import Agent


def search_routes(agent: Agent) -> APIRouter:
    """The ``/search`` route over ``agent.search``."""
    router = APIRouter(tags=["search"])

    @router.get("/search", **returns(SearchHits, "The hits, best first."))
    async def search(
        person: Caller,
        q: Annotated[str, Query(min_length=1, description="What to look for.")],
        within: Annotated[
            Literal["files", "documents", "memory", "library"],
            Query(
                alias="in",
                description="The indexed folders, your documents, your memory, your library.",
            ),
        ] = "files",
        k: Annotated[int, Query(ge=1, le=50, description="How many hits.")] = 5,
    ) -> SearchHits:
        """Search your own text as the agent's tools do: each hit's passage that answers the
        query (with its page), its fused score and why it was found (its BM25 rank, its
        vector rank, and the best hit that names its file when a link found it)."""
        return await run_in_threadpool(agent.searcher.search, person, q, within, k)

    return router
