"""What a person keeps here, read on their behalf by a surface that is not a turn (the MCP
server's ``search``, ``read_document``, ``recall_memory`` and ``remember``): their documents'
pages, a search over their documents, the configured folders and their memory, their
engrams.

Each call is one person's: their own documents and engrams only (someone else's document id
answers as an unknown one does), the folders everyone shares, the team's facts beside their
own memory as every turn's recall has them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from local2.contracts import Person, SearchSource
from local2.errors import InvalidInput, Unavailable

if TYPE_CHECKING:
    from local2.contracts import MemoryHit
    from local2.graph import Services
    from local2.service.desks._documents import DocumentDesk

MCP_SOURCE = "mcp"  # the ``source`` of an engram written through the MCP server
MAX_K = 50
SOURCES: tuple[SearchSource, ...] = ("documents", "files", "memory")


class PageText(TypedDict):
    """One page (slide, chapter) of a document, as read."""

    n: int
    text: str


class DocumentPages(TypedDict):
    """A page range of one of the person's documents."""

    id: str
    title: str
    path: str
    format: str
    unit: str
    pages_total: int
    first: int
    last: int
    pages: list[PageText]
    truncated: bool


class OwnText:
    """A person's documents, the shared folders and their memory, for one surface."""

    def __init__(self, services: Services, documents: DocumentDesk) -> None:
        self.services = services
        self.documents = documents

    # -- documents -------------------------------------------------------------------------

    def pages(
        self, person: Person, doc_id: str, first: int = 1, last: int | None = None
    ) -> DocumentPages:
        """Pages ``first`` to ``last`` of ``person``'s document ``doc_id`` (no ``last``: as
        many as ``files.max_chars`` holds, as read_file gives)."""
        record = self.documents.get(person, doc_id)
        library = self.documents.own_documents
        index = library.index(person.name)
        path = library.folder(person.name) / "files" / record["name"]
        ref = index.sandbox.admit(index.sandbox.roots[0], path)
        if ref is None:
            raise Unavailable(
                f"Document {doc_id}'s file is gone from your documents.",
                "Add it again (POST /documents), or remove the record.",
            )
        document = library.documents.read(index.sandbox, ref).document
        count = document.page_count
        if first < 1 or first > max(count, 1) or (last is not None and last < first):
            raise InvalidInput(
                f"Document {doc_id} has {count} {document.unit}s: no {first}"
                + (f" to {last}" if last is not None else "")
                + ".",
                f"Ask for {document.unit}s between 1 and {count}.",
            )
        room = self.services.settings.files.max_chars
        pages, end, cut = _within(document.pages, first, last or count, room)
        return {
            "id": record["id"],
            "title": record["title"],
            "path": record["path"],
            "format": record["format"],
            "unit": document.unit,
            "pages_total": count,
            "first": first,
            "last": end,
            "pages": pages,
            "truncated": cut,
        }

    # -- memory ----------------------------------------------------------------------------

    def recall(self, person: Person, query: str, k: int = 5) -> list[MemoryHit]:
        """``person``'s engrams (and the team's facts) most like ``query``; none when memory
        is off."""
        # lazy: local2.memory: ~3 ms, 1 module at MCP start
        from local2.memory import recall_with_team

        store = self.services.memory_for(person.name)
        if store is None or not query.strip():
            return []
        return recall_with_team(store, self.services.team_memory(), query, max(1, min(k, MAX_K)))

    def remember(self, person: Person, text: str) -> str:
        """Keep ``text`` in ``person``'s own memory (never the team's); its engram id."""
        if not text.strip():
            raise InvalidInput("Nothing to remember: the text is empty.", "Give the text.")
        store = self.services.memory_for(person.name)
        if store is None:
            raise Unavailable(
                "Memory is off on this server, so nothing can be remembered.",
                "Turn it on in memory.yaml (enabled: true) and restart.",
            )
        engram = store.save(text.strip(), session_id="", query_id="")
        store.mark(engram, source=MCP_SOURCE, written_by=person.name)
        return engram


def _within(pages: Any, first: int, last: int, room: int) -> tuple[list[PageText], int, bool]:
    """The pages from ``first`` to ``last`` that fit in ``room`` characters (the first one
    cut to it when alone it does not fit); the last page given and whether any was left
    out or cut."""
    shown: list[PageText] = []
    end = first
    for page in pages:
        if page.number < first or page.number > last:
            continue
        if len(page.text) > room:
            if not shown:
                shown.append({"n": page.number, "text": page.text[:room]})
                end = page.number
            return shown, end, True
        room -= len(page.text)
        shown.append({"n": page.number, "text": page.text})
        end = page.number
    return shown, end, False


def own_text_of(agent: Any) -> OwnText:
    """The :class:`OwnText` of ``agent`` (:class:`~local2.service.agent.Agent`)."""
    return OwnText(agent.services, agent.documents)
