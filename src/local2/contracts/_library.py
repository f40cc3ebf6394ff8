"""The library of what was read (``local2 library``, ``GET /library``, the app's Library tab):
each source kept once by its content, with every reading of it and the citations it got."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from local2.contracts._search import Found

Keep = Literal["all", "research", "off"]  # library.keep
Sources = Literal["web", "library", "both"]  # where a research run looks


class Reading(TypedDict):
    """One time the source was read: by which run (or chat turn), when, and what cited it."""

    at: float
    by: Annotated[Literal["research", "chat", "import"], Field(description="What read it.")]
    run_id: Annotated[str | None, Field(description="The research run that read it.")]
    session_id: Annotated[str | None, Field(description="The chat session that read it.")]
    query_id: NotRequired[
        Annotated[str | None, Field(description="The chat turn (its query id) that read it.")]
    ]
    cited: Annotated[
        list[int],
        Field(
            description="How it was cited: the run's [n] numbers; a chat turn's, its place "
            "(from 1) among the URLs the answer names."
        ),
    ]


class LibraryEntry(TypedDict):
    """One source kept: its URL, its content (by hash: one entry however often it was read),
    its pages, its original file for a document, and its readings."""

    id: Annotated[str, Field(description="The entry's id (lib-...), the person's own.")]
    url: str
    final_url: Annotated[str, Field(description="Where the URL led (after redirects).")]
    title: str
    site: Annotated[str, Field(description="The URL's host.")]
    format: Annotated[str, Field(description="html, text, pdf, docx, pptx, odt or epub.")]
    sha256: Annotated[str, Field(description="The content's hash (the original file's).")]
    pages: Annotated[int, Field(description="Pages (slides, chapters); 1 for a web page.")]
    chars: int
    bytes: Annotated[int, Field(description="Disk the entry takes (text and original).")]
    original: Annotated[str | None, Field(description="The original file's name, if kept.")]
    first_read: float
    last_read: float
    pinned: Annotated[bool, Field(description="Pinned entries are never evicted.")]
    readings: list[Reading]
    cited: Annotated[int, Field(description="How many runs and chat turns cited it.")]


class LibraryHit(Found):
    """A passage found in the library: the shared search hit (``source: library``, ``path``
    the original URL), and which entry, when it was read and by which runs (as a
    :class:`SearchHit` of ``local2 search`` and ``GET /search`` has them too)."""

    entry_id: str
    title: str
    read_at: float
    runs: list[str]


class LibraryPage(TypedDict):
    """An entry's kept text (all of it, or one page), as ``GET /library/{id}`` returns it."""

    entry: LibraryEntry
    page: Annotated[int | None, Field(description="The page shown; null: all of them.")]
    text: Annotated[str, Field(description="The kept text (untrusted: as it was read).")]
