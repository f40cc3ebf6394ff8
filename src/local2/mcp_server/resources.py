"""Resources and prompts: a research report as ``local2://research/{run_id}`` (Markdown), a
document as ``local2://documents/{document_id}`` and one of its pages as
``local2://documents/{document_id}/page/{n}`` (text), and the prompts "Research this" and
"What do my documents say about…"; a run's references as BibTeX, RIS or CSL-JSON
(``local2://research/{run_id}/references.bibtex``, ``.ris``, ``.csl``) and its report as
HTML, PDF or DOCX (``local2://research/{run_id}/report.html``, ``.pdf``, ``.docx``: the two
binary ones as blobs). ``resources/list`` lists the reports and documents
(:mod:`local2.mcp_server.listing`)."""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer

from local2.contracts import EXPORT_FORMATS, Person, ResearchPayload
from local2.errors import InvalidInput, Local2Error
from local2.mcp_server.caller import caller
from local2.mcp_server.failures import mcp_error
from local2.mcp_server.listing import document_uri
from local2.service import own_text_of

if TYPE_CHECKING:  # the agent's module imports the graph: what a listing need not wait for
    from local2.service import Agent

T = TypeVar("T")


async def answered(work: Callable[[], T], ctx: Context[Any, Any]) -> T:
    """``work`` in a thread; a refusal as the MCP error saying it in the API's words (an
    unknown resource with the code of the protocol version the session speaks)."""
    try:
        return await anyio.to_thread.run_sync(work)
    except Local2Error as exc:
        raise mcp_error(exc, ctx.protocol_version) from None


def report_markdown(agent: "Agent", run_id: str, person: Person) -> str:
    """A run's report, once written; before that (a run going on, paused, cut off), how far
    it is, so that a host told the report changed (``resources/subscribe``) reads where the
    run is rather than an error."""
    payload = agent.research.payload(run_id, person, agent.access)
    return payload.get("report") or progress_note(payload, run_id)


def progress_note(payload: ResearchPayload, run_id: str) -> str:
    steps = payload.get("steps") or []
    done = sum(1 for step in steps if step.get("status") == "done")
    found = len(payload.get("sources") or [])
    return (
        f"# {payload.get('question') or run_id}\n\n"
        f"No report yet: the run is {payload['status']}, {done} of {len(steps)} steps done, "
        f"{found} source{'s' if found != 1 else ''} found so far. The report is written "
        "when the run ends (subscribe to this resource to be told); research_status "
        "follows it, research_input answers a pause."
    )


def page_text(agent: "Agent", document_id: str, n: str, person: Person) -> str:
    try:
        number = int(n)
    except ValueError:
        raise InvalidInput(f"Page {n!r} is not a number.", "Name a page: .../page/3") from None
    pages = own_text_of(agent).pages(person, document_id, number, number)
    return "\n\n".join(page["text"] for page in pages["pages"])


def document_text(agent: "Agent", document_id: str, person: Person) -> str:
    """A document's text, page by page, as much as one read holds; where it stops, a line
    saying where the rest is."""
    read = own_text_of(agent).pages(person, document_id)
    unit = read["unit"]
    parts = [f"# {read['title'] or read['path']}"]
    parts += [f"## {unit} {page['n']}\n\n{page['text']}" for page in read["pages"]]
    if read["last"] < read["pages_total"]:
        rest = f"{document_uri(document_id)}/page/{read['last'] + 1}"
        parts.append(
            f"[{unit}s 1–{read['last']} of {read['pages_total']}: the rest one {unit} at a "
            f"time from {rest}]"
        )
    return "\n\n".join(parts)


def add_resources(server: MCPServer, agent: "Agent", person: Person | None) -> None:
    """Register the report, document and page resources and the prompts on ``server``."""

    @server.resource(
        "local2://research/{run_id}",
        name="research_report",
        title="A research report",
        description="The verified report of one of your research runs, cited as [n].",
        mime_type="text/markdown",
    )
    async def research_report(run_id: str, ctx: Context) -> str:
        who = caller(person)
        return await answered(lambda: report_markdown(agent, run_id, who), ctx)

    add_reference_resources(server, agent, person)

    @server.resource(
        "local2://documents/{document_id}",
        name="document",
        title="A document",
        description="One of your documents as text, page by page (as much as one read holds).",
        mime_type="text/plain",
    )
    async def document(document_id: str, ctx: Context) -> str:
        who = caller(person)
        return await answered(lambda: document_text(agent, document_id, who), ctx)

    @server.resource(
        "local2://documents/{document_id}/page/{n}",
        name="document_page",
        title="A page of a document",
        description="One page (slide, chapter) of one of your documents, as text.",
        mime_type="text/plain",
    )
    async def document_page(document_id: str, n: str, ctx: Context) -> str:
        who = caller(person)
        return await answered(lambda: page_text(agent, document_id, n, who), ctx)

    add_prompts(server)


REFERENCE_FORMATS = {"bibtex": "BibTeX", "ris": "RIS", "csl": "CSL-JSON"}
REPORT_FILES = {"html": "HTML", "pdf": "PDF", "docx": "DOCX (Word)"}


def add_reference_resources(server: MCPServer, agent: "Agent", person: Person | None) -> None:
    """One resource per export format: a run's references as BibTeX, RIS or CSL-JSON, built
    from each source's record (``local2://research/{run_id}/references.bibtex``...), and its
    report as HTML, PDF or DOCX (``.../report.pdf``...), citations linked to the References."""
    for fmt, named in REFERENCE_FORMATS.items():
        server.resource(
            f"local2://research/{{run_id}}/references.{fmt}",
            name=f"research_references_{fmt}",
            title=f"A research run's references ({named})",
            description=f"The references of one of your research runs as {named}.",
            mime_type=EXPORT_FORMATS[fmt][1].split(";", 1)[0],
        )(_references(agent, person, fmt))
    for fmt, named in REPORT_FILES.items():
        server.resource(
            f"local2://research/{{run_id}}/report.{fmt}",
            name=f"research_report_{fmt}",
            title=f"A research report ({named})",
            description=(
                f"The verified report of one of your research runs as {named}, each "
                "citation linked to its entry under References, a document's page kept."
            ),
            mime_type=EXPORT_FORMATS[fmt][1].split(";", 1)[0],
        )(_references(agent, person, fmt))


def _references(
    agent: "Agent", person: Person | None, fmt: str
) -> Callable[[str, Context[Any, Any]], Any]:
    """The resource that reads a run's references (or report) as ``fmt``, its parameters the
    URI's: text for a text format, bytes (a blob) for PDF and DOCX."""

    async def references(run_id: str, ctx: Context) -> str | bytes:
        who = caller(person)
        exported = await answered(
            lambda: agent.research.export(run_id, fmt, who, agent.access), ctx
        )
        return exported.data if exported.binary else exported.text

    return references


def add_prompts(server: MCPServer) -> None:
    @server.prompt(name="research_this", title="Research this")
    def research_this(question: str) -> str:
        """Research a question with LoCAL2 and report what the sources say."""
        return (
            f"Research this with LoCAL2's research tool: {question}\n\n"
            "Follow its progress; if it pauses for a plan review or a question, show me and "
            "answer it with research_input. Then give me the verified report with its "
            "sources (where, page, why each was read)."
        )

    @server.prompt(name="what_do_my_documents_say", title="What do my documents say about…")
    def what_do_my_documents_say(topic: str) -> str:
        """Answer from your own documents, citing path and page."""
        return (
            f"What do my documents say about {topic}?\n\n"
            "Use LoCAL2's search tool within my documents, read the pages that answer with "
            "read_document, and answer only from them, citing each document's path and page."
        )
