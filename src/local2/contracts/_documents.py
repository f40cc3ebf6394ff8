"""A person's own documents (``POST /documents``, ``local2 documents``, the app's upload) and
the passages of a session's attached documents a turn was given (``document_hits``)."""

from __future__ import annotations

from typing import Annotated, NotRequired

from pydantic import Field
from typing_extensions import TypedDict


class DocumentRecord(TypedDict):
    """One document of a person's: what it is, where the file tools find it, and the
    sessions it is attached to (searched for each of their questions)."""

    id: Annotated[str, Field(description="The document's id (doc-...), the person's own.")]
    name: Annotated[str, Field(description="Its file name in the person's documents.")]
    path: Annotated[
        str, Field(description="Its path for read_file and search_files, e.g. my-documents/a.pdf")
    ]
    format: str
    title: str
    pages: Annotated[int, Field(description="Pages, slides or chapters.")]
    bytes: int
    sha256: str
    added_at: float
    sessions: Annotated[list[str], Field(description="Sessions it is attached to.")]
    no_text_pages: Annotated[
        list[int], Field(description="Pages with no text layer that OCR did not read.")
    ]
    notes: list[str]


class DocumentPassage(TypedDict):
    """Where a passage given for a turn was found (the ``documents.recall`` event's)."""

    file: str
    page: int | None
    unit: str
    score: float


class DocumentHit(TypedDict):
    """A passage of a document attached to the session, found for this turn's question."""

    document_id: str
    file: Annotated[str, Field(description="The document's path, as read_file takes it.")]
    page: Annotated[int | None, Field(description="Its page (slide, chapter); null: none.")]
    unit: Annotated[str, Field(description="What its pages are: page, slide or chapter.")]
    score: Annotated[float, Field(description="Similarity to the question, 0-1.")]
    text: str  # what the model is given: the chunk, or its passage when the chunk is too long
    passage: NotRequired[
        Annotated[str, Field(description="Its sentences that answer, as `local2 search` shows.")]
    ]
    found_by: NotRequired[
        Annotated[
            str,
            Field(description="Why search found it: `words #1, meaning #2` (BM25, similarity)."),
        ]
    ]
