"""The tools over a person's chat, documents and memory: ``ask`` (a chat turn), ``search``,
``read_document``, ``list_documents``, ``recall_memory`` and ``remember``.

``ask`` is a turn like ``POST /query``'s: in a session of the caller's (new, or given), in
the turn log and the audit log, in the app's session list and time travel, rateable. The
rest read (or, ``remember``, write) the caller's own things through the service.
"""

from typing import TYPE_CHECKING, Annotated, Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from local2 import events
from local2.contracts import WEB_FETCH, Person, TurnPayload
from local2.errors import Conflict, TurnCancelled
from local2.mcp_server._hints import ADDS, READS, WORKS
from local2.mcp_server.caller import caller
from local2.mcp_server.failures import refusals
from local2.mcp_server.search import search_own
from local2.mcp_server.shapes import (
    AskResult,
    Citation,
    Documents,
    Recalled,
    Remembered,
    SearchResult,
    Within,
)
from local2.service import DocumentPages, own_text_of

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent, BackgroundTurn

GRADE_WAIT_S = 600.0  # as POST /query?wait=critique waits for a grade that gave way
STOPPED = "The turn was stopped before its answer: nothing was recorded."


def citations(payload: TurnPayload) -> list[Citation]:
    """What the answer rests on: files and pages read, documents and memories given."""
    found: list[Citation] = []
    for entry in payload.get("event_log") or []:
        if entry.get("subject") == events.FILE_READ:
            where, page = str(entry.get("path") or ""), entry.get("first_page")
            found.append(
                {"kind": "file", "where": where, "page": page if isinstance(page, int) else None}
            )
    for call in payload.get("tool_calls") or []:
        if call.get("tool") == WEB_FETCH and not call.get("error"):
            url = str((call.get("args") or {}).get("url") or "")
            found.append({"kind": "url", "where": url, "page": None})
    for hit in payload.get("document_hits") or []:
        found.append({"kind": "document", "where": hit["file"], "page": hit["page"]})
    for memory in payload.get("memory_hits") or []:
        found.append({"kind": "memory", "where": memory["id"], "page": None})
    return found


def answer_of(payload: TurnPayload, critic_on: bool) -> AskResult:
    """The tool's answer for a turn's payload (at publish, or graded)."""
    status = payload.get("status") or "done"
    critique = payload.get("critique")
    pending = bool(payload.get("critique_pending")) or (
        critic_on and critique is None and status == "done" and not payload.get("error")
    )
    return {
        "session_id": str(payload.get("session_id") or ""),
        "query_id": str(payload.get("query_id") or ""),
        "answer": payload.get("answer") or "",
        "citations": citations(payload),
        "critique": critique,
        "critique_pending": pending,
        "status": status,
        "model": payload.get("model"),
    }


async def run_turn(agent: "Agent", turn: "BackgroundTurn", graded: bool) -> TurnPayload:
    """The turn's payload at publish (the critic goes on), or once graded; a cancelled call
    stops the turn (``POST /sessions/{id}/stop``)."""
    try:
        if graded:

            def final() -> TurnPayload:
                return agent.turns.graded(turn.until_final(), GRADE_WAIT_S)

            return await anyio.to_thread.run_sync(final, abandon_on_cancel=True)
        payload = await turn.answer()
        turn.hand_over()
        return payload
    except anyio.get_cancelled_exc_class():
        if turn.turn is not None:
            agent.turns.stop(turn.turn.session_id)
        raise
    except TurnCancelled:
        raise Conflict(STOPPED, "Ask again to get an answer.") from None


def add_chat_tools(server: MCPServer, agent: "Agent", person: Person | None) -> None:
    """Register ``ask`` and the tools over documents and memory on ``server``."""

    @server.tool(title="Ask LoCAL2", annotations=WORKS)
    @refusals
    async def ask(
        question: Annotated[str, Field(description="The question, as you would type it.")],
        session_id: Annotated[
            str | None, Field(description="Go on in this session of yours; none: a new one.")
        ] = None,
        wait_for_grade: Annotated[
            bool, Field(description="true: return once the critic has graded the answer.")
        ] = False,
        sources: Annotated[
            str | None,
            Field(
                description="Where its web search looks, comma-separated: web, library, "
                "arxiv, pubmed, semantic_scholar, openalex, crossref, wikipedia "
                "(default: the settings')."
            ),
        ] = None,
    ) -> AskResult:
        """Ask LoCAL2 in a chat session (it may search, read your files and recall your
        memory). Returns the answer, what it cites, the critic's grade when ready, and the
        session id to go on in. The turn shows in the app like any other."""
        who = caller(person)
        options = agent.turns.options(compare=False, sources=sources)
        turn = await agent.turns.begin(question, session_id, options, tokens=False, person=who)
        return answer_of(await run_turn(agent, turn, wait_for_grade), agent.info.critic)

    @server.tool(title="Search your files, documents, memory and library", annotations=READS)
    @refusals
    async def search(
        query: Annotated[str, Field(description="What to look for.")],
        within: Annotated[
            list[Within] | None, Field(description="Where to look; none: everywhere.")
        ] = None,
        k: Annotated[int, Field(ge=1, le=50, description="How many passages.")] = 8,
    ) -> SearchResult:
        """Search your own documents, the configured folders, your memory and your library
        (what your research runs read); each passage with its path (a library hit: its URL,
        kept copy, when it was read and by which runs), page and score."""
        who = caller(person)
        return await anyio.to_thread.run_sync(lambda: search_own(agent, who, query, within, k))

    add_document_tools(server, agent, person)
    add_memory_tools(server, agent, person)


def add_document_tools(server: MCPServer, agent: "Agent", person: Person | None) -> None:
    @server.tool(title="Your documents", annotations=READS)
    @refusals
    async def list_documents() -> Documents:
        """Your documents (uploaded to LoCAL2), newest first: id, title, pages."""
        who = caller(person)
        found = await anyio.to_thread.run_sync(lambda: agent.documents.records(who))
        return {"documents": found}

    @server.tool(title="Read pages of a document", annotations=READS)
    @refusals
    async def read_document(
        document_id: Annotated[str, Field(description="The document's id (doc-...).")],
        first_page: Annotated[int, Field(ge=1)] = 1,
        last_page: Annotated[
            int | None, Field(ge=1, description="none: as many pages as fit after the first.")
        ] = None,
    ) -> DocumentPages:
        """Pages (slides, chapters) of one of your documents, as text."""
        who = caller(person)

        def read() -> DocumentPages:
            return own_text_of(agent).pages(who, document_id, first_page, last_page)

        return await anyio.to_thread.run_sync(read)


def add_memory_tools(server: MCPServer, agent: "Agent", person: Person | None) -> None:
    @server.tool(title="Recall from your memory", annotations=READS)
    @refusals
    async def recall_memory(
        query: Annotated[str, Field(description="What to recall.")],
        k: Annotated[int, Field(ge=1, le=50)] = 5,
    ) -> Recalled:
        """What you told LoCAL2 before (and the team's shared facts) most like the query."""
        who = caller(person)
        hits: Any = await anyio.to_thread.run_sync(lambda: own_text_of(agent).recall(who, query, k))
        return {"query": query, "memories": hits}

    @server.tool(title="Remember something", annotations=ADDS)
    @refusals
    async def remember(
        text: Annotated[str, Field(description="What to remember, in your words.")],
    ) -> Remembered:
        """Keep a fact in your own memory (a write: LoCAL2 recalls it in later answers)."""
        who = caller(person)
        engram = await anyio.to_thread.run_sync(lambda: own_text_of(agent).remember(who, text))
        return {"id": engram, "text": text.strip()}
