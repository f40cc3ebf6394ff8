"""What the MCP tools return: their structured output, published as each tool's output
schema (the SDK derives it from these TypedDicts)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from local2.contracts import (
    DocumentRecord,
    Grade,
    MemoryHit,
    NoSources,
    ResearchRequest,
    ResearchRun,
    ResearchSource,
    RunStatus,
    SearchHit,
)


class Citation(TypedDict):
    """What an answer rests on: a page fetched, a file or document page read, a memory."""

    kind: Annotated[str, Field(description="url, file, document or memory.")]
    where: Annotated[str, Field(description="The URL, the file's path, or the engram's id.")]
    page: Annotated[int | None, Field(description="The page read; null: none.")]


class AskResult(TypedDict):
    """A chat turn's answer, in the session it was asked in."""

    session_id: str
    query_id: str
    answer: str
    citations: list[Citation]
    critique: Annotated[
        Grade | None, Field(description="The critic's grade; null while it is pending or off.")
    ]
    critique_pending: Annotated[bool, Field(description="True when the grade comes later.")]
    status: Annotated[str, Field(description="done, or awaiting_approval (a tool call waits).")]
    model: str | None


class ResearchResult(TypedDict):
    """A research run: its status, and once done its verified report and sources."""

    run_id: str
    question: str
    status: RunStatus
    report: Annotated[
        str,
        Field(
            description="The verified report, Markdown, cited as [n] (status no_sources: what "
            "was tried and the next step instead; no report was written)."
        ),
    ]
    sources: Annotated[
        list[ResearchSource],
        Field(description="The references by number: where, page, and why each was read."),
    ]
    unsupported: Annotated[int, Field(description="Sentences verification removed or marked.")]
    stopped: Annotated[str | None, Field(description="Why the run ended early, or null.")]
    awaiting: Annotated[
        ResearchRequest | None,
        Field(description="What a paused run waits for: answer it with research_input."),
    ]
    no_sources: Annotated[
        NoSources | None,
        Field(
            description="Status no_sources: why nothing was found (cause: no_network, "
            "empty_library, refused, ...), what was tried, and the one next step; else null."
        ),
    ]
    resource: Annotated[str, Field(description="The report as a resource (Markdown).")]


class ResearchStatus(TypedDict):
    """How far a run is."""

    run_id: str
    question: str
    status: RunStatus
    steps_done: int
    steps: int
    sources: int
    awaiting: ResearchRequest | None
    no_sources: Annotated[
        NoSources | None,
        Field(
            description="Status no_sources: why nothing was found (cause: no_network, "
            "empty_library, refused, ...), what was tried, and the one next step; else null."
        ),
    ]


class SearchResult(TypedDict):
    """The passages found in the person's own text, best first."""

    query: str
    hits: list[SearchHit]


class Documents(TypedDict):
    documents: list[DocumentRecord]


class Runs(TypedDict):
    runs: list[ResearchRun]


class Recalled(TypedDict):
    """The person's memories most like the query (the team's facts among them)."""

    query: str
    memories: list[MemoryHit]


class Remembered(TypedDict):
    id: Annotated[str, Field(description="The new engram's id.")]
    text: str


class Failure(TypedDict):
    """A refusal, as the HTTP API words it."""

    error: str
    fix: str
    status: Annotated[int, Field(description="The HTTP status the API answers it with.")]


Within = Literal["documents", "files", "memory", "library"]  # search's sources, as the API's
