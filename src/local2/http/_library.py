"""The library of what was read over HTTP (docs/library.md):

- ``GET /library`` your entries, the last read first; ``DELETE /library`` all of them;
- ``GET /library/search?q=`` passages of your library that answer ``q``;
- ``GET /library/{id}`` an entry and its kept text (``?page=N``: one page);
- ``GET /library/{id}/original`` a document's original file;
- ``POST /library/{id}/pin`` (``{"pinned": bool}``), ``DELETE /library/{id}``;
- ``GET /library/export`` a zip of it all, ``POST /library/import`` takes one back.

Each request is one person's and sees only their library: another person's id answers 404
exactly as an unknown one does. Kept text is served as data (``text/plain`` inside JSON,
an original as an attachment): it is what a page said, never instructions.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import FileResponse, Response
from starlette.concurrency import run_in_threadpool

from local2.contracts import LibraryEntry, LibraryHit, LibraryPage
from local2.errors import InvalidInput, UnknownLibraryEntry
from local2.http._identity import Caller
from local2.http._openapi import returns
from local2.service import Agent

ZIP = "application/zip"


def library_routes(agent: Agent) -> APIRouter:
    """The ``/library`` routes over ``agent.library``."""
    router = APIRouter(tags=["library"])
    _whole(router, agent)
    _entries(router, agent)
    return router


def _whole(router: APIRouter, agent: Agent) -> None:
    """The routes of the whole library: list, clear, search, export, import."""
    desk = agent.library
    cap = agent.settings.library.max_mb * 1024 * 1024

    @router.get("/library", **returns(list[LibraryEntry], "Your library, the last read first."))
    def entries(
        person: Caller, limit: Annotated[int | None, Query(ge=1)] = None
    ) -> list[LibraryEntry]:
        """What you read (research runs' sources, and chat's fetched pages by setting)."""
        return desk.entries(person, limit)

    @router.delete("/library", **returns(list[str], "The ids removed."))
    def clear(person: Caller) -> list[str]:
        """Remove your whole library: every entry, from the index and from disk."""
        return [desk.remove(person, e["id"])["id"] for e in desk.entries(person)]

    @router.get("/library/search", **returns(list[LibraryHit], "Passages, best first."))
    def search(
        person: Caller,
        q: Annotated[str, Query(min_length=1, max_length=2000)],
        k: Annotated[int | None, Query(ge=1, le=50)] = None,
    ) -> list[LibraryHit]:
        """Passages of your library that answer ``q``: each names its source (URL), page,
        when it was read and by which runs."""
        return desk.search(person, q, k)

    @router.get("/library/export", response_class=Response, responses={200: {"content": {ZIP: {}}}})
    def export(person: Caller) -> Response:
        """Your library as a zip: ``library.json`` (the entries), the texts and originals."""
        headers = {"Content-Disposition": 'attachment; filename="library.zip"'}
        return Response(desk.export(person), media_type=ZIP, headers=headers)

    @router.post("/library/import", **returns(list[str], "The ids of the entries filed."))
    async def import_(person: Caller, request: Request) -> list[str]:
        """File the entries of a library export (the zip's bytes as the body) in yours."""
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > cap:
                raise InvalidInput(
                    "The export is larger than your library may be (library.max_mb)."
                )
        return await run_in_threadpool(desk.import_, person, bytes(data))


def _entries(router: APIRouter, agent: Agent) -> None:
    """The routes of one entry: show, its original, pin, remove (after /library/export)."""
    desk = agent.library

    @router.get("/library/{entry_id}", **returns(LibraryPage))
    def entry(
        person: Caller, entry_id: str, page: Annotated[int | None, Query(ge=1)] = None
    ) -> LibraryPage:
        """One entry of yours and its kept text (404 for any other id)."""
        return desk.page(person, entry_id, page)

    @router.get("/library/{entry_id}/original", response_class=FileResponse)
    def original(person: Caller, entry_id: str) -> FileResponse:
        """A document's original file, as it was downloaded."""
        found = desk.original(person, entry_id)
        if found is None:
            raise UnknownLibraryEntry(f"Entry '{entry_id}' has no original file among yours.")
        return FileResponse(found, filename=found.name, content_disposition_type="attachment")

    @router.post("/library/{entry_id}/pin", **returns(LibraryEntry))
    def pin(
        person: Caller, entry_id: str, pinned: Annotated[bool, Body(embed=True)] = True
    ) -> LibraryEntry:
        """Pin an entry (never evicted over ``library.max_mb``), or unpin it."""
        return desk.pin(person, entry_id, pinned)

    @router.delete("/library/{entry_id}", **returns(LibraryEntry, "The entry removed."))
    def remove(person: Caller, entry_id: str) -> LibraryEntry:
        """Remove an entry of yours: from your index and from disk."""
        return desk.remove(person, entry_id)
