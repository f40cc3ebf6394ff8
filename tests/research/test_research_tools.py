"""Research steps over any read-only tool (docs/architecture.md, "A research step"): the
person's files (search_files, then read_file on what it found), a read-only tool from
elsewhere (as an MCP server's), and a document tool that marks its pages, each read filed in
the ledger under its label (and page). A step's arguments are checked against its tool's
own schema; a tool that writes never serves as a step. Through the real parts: ChatOllama
against the Ollama-protocol server, the real file tools and index, SQLite checkpoints."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from local2.research._plan import check_plan, parse_plan, plan_schema
from local2.research._state import StepTools, step_catalog
from local2.service.research._research import Research
from local2.tools._base import Tool, ToolContext
from local2.tools._files import file_tools
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.results import web_steps
from tests.kit.helpers import make_settings

BUDGET = (
    "# Household budget 2025\n\n"
    "The garden budget for 2025 is 1200 euros, approved by Marta in January.\n"
    "Groceries are capped at 450 euros a month.\n"
)
REPORT_PAGES = (
    "Harbour report 2024\n"
    "[Page 1 of 2]\n"
    "The harbour handled 310 ships in 2024.\n"
    "[Page 2 of 2]\n"
    "Dredging cost 42000 pounds and was paid by the council.\n"
)


READ: list[dict[str, Any]] = []  # the calls read_document was given


def reads_pages(args: Mapping[str, Any], ctx: ToolContext) -> str:
    """A document tool as the documents part writes its result: pages marked (one page when
    ``pages`` names it)."""
    READ.append(dict(args))
    if args.get("path") != "docs/harbour.pdf":
        return "no such document"
    if args.get("pages") == "2":
        return "[Page 2 of 2]\nDredging cost 42000 pounds and was paid by the council.\n"
    return REPORT_PAGES


def finds_pages(args: Mapping[str, Any], ctx: ToolContext) -> str:
    """A search of the person's documents as the file index writes its hits: file and page."""
    return (
        f"Files matching: {args.get('query')}\n"
        "[1] docs/harbour.pdf, page 2 (similarity 0.81)\n"
        "    Dredging cost 42000 pounds and was paid by the council.\n"
    )


def weather(args: Mapping[str, Any], ctx: ToolContext) -> str:
    """A read-only tool from elsewhere (say, an MCP server's), whose whole result is one source."""
    return f"Tide tables for {args.get('port')}: high water at 06:12 and 18:40."


def erase(args: Mapping[str, Any], ctx: ToolContext) -> str:  # pragma: no cover - never called
    raise AssertionError("a tool that writes must never run as a research step")


def extra_tools() -> list[Tool]:
    document = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "pages": {"type": "string"}},
        "required": ["path"],
    }
    port = {"type": "object", "properties": {"port": {"type": "string"}}, "required": ["port"]}
    query = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    return [
        Tool(
            "search_documents",
            "Search the person's documents.",
            query,
            finds_pages,
            effects="read",
            output="private",
            evidence="listing",
        ),
        Tool(
            "read_document",
            "Read a document's pages.",
            document,
            reads_pages,
            effects="read",
            output="private",
        ),
        Tool("tides__table", "Tide tables of a port.", port, weather, effects="read"),
        Tool("notes__erase", "Erase a note.", document, erase, effects="write"),
    ]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "budget.md").write_text(BUDGET)
    (root / "recipes.md").write_text("# Recipes\n\nPancakes (two eggs), flour, milk.\n")
    return root


def service(fake: FakeOllama, tmp_path: Path, notes: Path) -> Research:
    settings = make_settings(
        tmp_path,
        system={"ollama_host": fake.url},
        generator={"backend": "ollama"},
        memory={"enabled": False},
        critic={"enabled": False},
        files={"roots": [str(notes)], "embedder": "lexical"},
        research={"max_rounds": 1},
    )
    tools = [*file_tools(settings), *extra_tools()]
    return Research(settings, backend="ollama", tools=tools)


def step(step_id: str, tool: str, *requires: str, **args: Any) -> dict[str, Any]:
    """One step of a plan as the planner writes it."""
    return {
        "id": step_id,
        "description": "",
        "tool": tool,
        "args": args,
        "requires": list(requires),
    }


def plan_of(*steps: dict[str, Any]) -> dict[str, Any]:
    """A plan of ``steps``, then compose."""
    return {"goal": "g", "steps": [*steps, step("z", "compose", *[s["id"] for s in steps])]}


def test_only_tools_that_read_serve_as_steps_with_their_own_schemas(
    tmp_path: Path, notes: Path
) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        run = service(fake, tmp_path, notes)
        tools = step_catalog(run.services)
        run.close()
    assert "notes__erase" not in tools and "notes__erase" not in run.services.tools
    assert {"search_files", "read_file", "read_document", "tides__table"} <= set(tools.names())
    assert tools.get("search_files").finder and tools.get("read_file").target == "path"
    schema = plan_schema(tools, 8)
    args = schema["properties"]["steps"]["items"]["properties"]["args"]["properties"]
    assert {"query", "path", "port", "from_step", "top"} <= set(args)

    def problems(tool: str, **args: Any) -> list[str]:
        plan, errors = parse_plan(plan_of(step("a", tool, **args)))
        assert plan is not None, errors
        return check_plan(plan, tools, 8)

    assert problems("tides__table", port="Kelsby") == []
    assert "not of type 'string'" in problems("read_file", path=3)[0]
    assert "takes no args.query" in problems("tides__table", port="x", query="y")[0]
    assert "needs args.port" in problems("tides__table")[0]
    assert "unknown tool 'notes__erase'" in problems("notes__erase", path="a")[0]
    reads_web = step("a", "web_fetch", from_step="a")
    assert "unknown tool" in StepTools().check("web_fetch", reads_web["args"])[0]


def test_a_run_reads_the_persons_files_and_a_paged_document_and_cites_pages(
    tmp_path: Path, notes: Path
) -> None:
    plan = plan_of(
        step("a", "search_files", query="garden budget", k=1),
        step("b", "read_file", "a", from_step="a", top=1),
        step("c", "read_document", path="docs/harbour.pdf"),
        step("d", "tides__table", port="Kelsby"),
    )
    # Planted: a fact of page 2 cited to page 1; it must not survive.
    brain = ResearchBrain(plans=[plan], extra=["Dredging cost 42000 pounds [2]."])
    with FakeOllama(brain) as fake:
        run = service(fake, tmp_path, notes)
        payload = run.run("What is the garden budget, and what did the harbour cost?")
        state = run.graph.get_state({"configurable": {"thread_id": payload["run_id"]}}).values
        run.close()
    ledger = {s["url"]: s for s in state["ledger"]}
    budget = next(s for label, s in ledger.items() if label.endswith("budget.md"))
    assert budget["kind"] == "page" and "1200 euros" in budget["text"]
    assert budget["tool"] == "read_file"
    pages = [ledger["docs/harbour.pdf#page=1"], ledger["docs/harbour.pdf#page=2"]]
    assert [(p["page"], p["title"]) for p in pages] == [
        (1, "harbour.pdf, page 1"),
        (2, "harbour.pdf, page 2"),
    ]
    assert "310 ships" in pages[0]["text"] and "310 ships" not in pages[1]["text"]
    tides = next(s for s in ledger.values() if s["tool"] == "tides__table")
    assert tides["url"] == "tides__table(port=Kelsby)" and "06:12" in tides["text"]
    assert [s["n"] for s in state["ledger"] if s["url"] == "docs/harbour.pdf#page=1"] == [2]
    report = payload["report"]
    body, references = report.split("## References")[0], report.split("## References")[1]
    assert "The harbour handled 310 ships in 2024. [2]" in body
    assert "Dredging cost 42000 pounds [2]" not in body  # page 2's fact cited to page 1
    assert any("'42000' not in the cited source [2]" in u["reason"] for u in payload["unsupported"])
    assert "harbour.pdf, page 1 (docs/harbour.pdf#page=1)" in references.replace("\\", "")
    assert "Dredging cost 42000 pounds and was paid by the council. [3]" in body
    assert all(s["status"] == "done" for s in payload["steps"])


def test_a_hit_in_a_documents_page_is_read_as_that_page(tmp_path: Path, notes: Path) -> None:
    """A search of the person's documents names a file and a page; the step that reads its
    top hit asks the document tool for that page, and the page it read takes the hit's place
    in the ledger (one source, its number kept), cited as the file and the page."""
    plan = plan_of(
        step("a", "search_documents", query="dredging cost"),
        step("b", "read_document", "a", from_step="a", top=1),
    )
    READ.clear()
    with FakeOllama(ResearchBrain(plans=[plan])) as fake:
        run = service(fake, tmp_path, notes)
        payload = run.run("What did the dredging cost?")
        state = run.graph.get_state({"configurable": {"thread_id": payload["run_id"]}}).values
        run.close()
    assert READ == [{"path": "docs/harbour.pdf", "pages": "2"}]
    (source,) = state["ledger"]
    assert source["url"] == "docs/harbour.pdf#page=2" and source["kind"] == "page"
    assert source["page"] == 2 and source["n"] == 1 and "paid by the council" in source["text"]
    assert source["title"] == "docs/harbour.pdf, page 2"
    body, references = payload["report"].split("## References")
    assert "Dredging cost 42000 pounds and was paid by the council. [1]" in body
    assert "docs/harbour.pdf#page=2" in references.replace("\\", "")


def test_a_pdf_in_the_persons_folder_is_cited_by_file_and_page(tmp_path: Path) -> None:
    """The real file tools and document reader (issue 37): a PDF in the person's folder is
    found by search_files page by page, the hit's page is what read_file reads, and the
    report cites that page: its reference names the file and the page, and a sentence citing
    it with a fact of the other page is removed (verified against what was read)."""
    from local2_testkit.documents import pdf_of

    library = tmp_path / "library"
    library.mkdir()
    (library / "harbour.pdf").write_bytes(
        pdf_of(
            [
                ["The harbour handled 310 ships in 2024, a record for Kelsby."],
                ["Dredging the channel cost 42000 pounds and was paid by the council."],
            ]
        )
    )
    plan = plan_of(
        step("a", "search_files", query="dredging channel cost council", k=1),
        step("b", "read_file", "a", from_step="a", top=1),
    )
    brain = ResearchBrain(plans=[plan], extra=["The harbour handled 310 ships in 2024 [1]."])
    with FakeOllama(brain) as fake:
        run = service(fake, tmp_path, library)
        payload = run.run("What did dredging the harbour channel cost?")
        state = run.graph.get_state({"configurable": {"thread_id": payload["run_id"]}}).values
        run.close()
    (source,) = state["ledger"]
    assert source["url"].endswith("harbour.pdf#page=2") and source["page"] == 2
    assert source["kind"] == "page" and source["tool"] == "read_file"
    assert "42000 pounds" in source["text"] and "310 ships" not in source["text"]
    read = next(s for s in payload["steps"] if s["tool"] == "read_file")
    assert read["calls"][0]["args"]["pages"] == "2"  # the hit's page, and only it, was read
    body, references = payload["report"].split("## References")
    assert "42000 pounds" in body and "[1]" in body
    assert "310 ships" not in body  # page 1's fact cited to page 2: removed
    (removed,) = payload["unsupported"]
    assert (
        removed["reason"].startswith("'310'") and "not in the cited source [1]" in removed["reason"]
    )
    plain_refs = references.replace("\\", "")
    assert "harbour.pdf, page 2" in plain_refs and "harbour.pdf#page=2" in plain_refs


def test_a_document_web_fetch_read_is_filed_page_by_page() -> None:
    """web_fetch of a PDF (issue 37's shape: a document note, then each passage's page under
    ``[Page N]``): one ledger source per page, each under <url>#page=N."""
    from local2.research._execute import found_in

    fetch = web_steps().get("web_fetch")
    assert fetch is not None
    url = "https://example.org/report.pdf"
    text = (
        f"URL: {url}\nExtracted text:\n"
        f'[Document: PDF, 40 pages, "Harbour report"; cite a page as {url}#page=N]\n'
        "[Page 3]\nThe harbour handled 310 ships.\n[…]\nRecords began in 1894.\n"
        "[Page 12]\nDredging cost 42000 pounds.\n"
    )
    found = found_in(fetch, {"url": url}, text, "s2", "Harbour report")
    assert [(f["url"], f["page"], f["title"]) for f in found] == [
        (f"{url}#page=3", 3, "Harbour report, page 3"),
        (f"{url}#page=12", 12, "Harbour report, page 12"),
    ]
    assert "310 ships" in found[0]["text"] and "42000" not in found[0]["text"]
