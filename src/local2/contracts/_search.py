"""What a search of the person's own text returns (``local2 search``, ``GET /search``, the
MCP ``search`` tool): passages with where they are and why they were found."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

# Where a search looks: the configured folders, the person's uploaded documents, their
# memory, the library of what was read.
SearchSource = Literal["files", "documents", "memory", "library"]


class Why(TypedDict):
    """Why a hit was found: its rank in each ranking that was fused (null: not in it)."""

    bm25_rank: Annotated[int | None, Field(description="1-based rank by BM25; null: not found.")]
    vector_rank: Annotated[
        int | None, Field(description="1-based rank by embedding similarity; null: not found.")
    ]
    linked_rank: Annotated[
        int | None,
        Field(description="1-based rank among the files the best hits name; null: not named."),
    ]
    linked_from: Annotated[
        str | None,
        Field(description="The path of the best hit that names this file by its title; null."),
    ]
    reranked: Annotated[bool, Field(description="Whether a reranker ordered the final list.")]


class Found(TypedDict):
    """What every hit says: where the passage is, its score, the passage and why."""

    source: SearchSource
    path: Annotated[str, Field(description="Its path (files, documents), URL (library) or id.")]
    page: Annotated[int | None, Field(description="Its page, slide or chapter; null: none.")]
    score: Annotated[float, Field(description="The fused score (higher is better).")]
    passage: Annotated[str, Field(description="The passage that answers, as the model sees it.")]
    why: Why


class SearchHit(Found):
    """One passage found: the best passage of its chunk for the query, not its first lines.
    A library hit also names its kept copy, and when and by which runs it was read."""

    entry_id: NotRequired[
        Annotated[str, Field(description="library: the kept copy's entry id (lib-...).")]
    ]
    title: NotRequired[Annotated[str, Field(description="library: the source's title.")]]
    read_at: NotRequired[
        Annotated[float, Field(description="library: when it was last read (Unix time).")]
    ]
    runs: NotRequired[
        Annotated[list[str], Field(description="library: the research runs that read it.")]
    ]


class SearchHits(TypedDict):
    """A search's answer: the query and its hits, best first."""

    query: str
    hits: list[SearchHit]
