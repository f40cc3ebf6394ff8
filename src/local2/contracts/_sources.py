"""What a citation needs to know about a source (issue 56): its kind, date,
authors, venue, identifiers, open-access PDF and the flags its source publishes.

A search hit of any provider maps into :class:`SourceMeta` (a general web hit knows none of
it but its kind and who found it: every value is then ``None`` or empty, shown as
"undated"); the evidence ledger keeps it beside each source, the payload's ``sources`` carry
it, and the exports (BibTeX, RIS, CSL-JSON, the report's References) are built from it.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

# What a source is, as a citation style needs to know: a peer-reviewed paper, a preprint,
# an encyclopedia article, a news story, any other web page, code, or a document a person
# read (a file of theirs).
SourceKind = Literal["paper", "preprint", "encyclopedia", "news", "web", "code", "document"]
SOURCE_KINDS: tuple[SourceKind, ...] = (
    "paper",
    "preprint",
    "encyclopedia",
    "news",
    "web",
    "code",
    "document",
)


class SourceMeta(TypedDict):
    """A source's bibliographic record, each field as its provider published it (``None``:
    not known, never guessed)."""

    kind: SourceKind
    provider: Annotated[str, Field(description="Who found it: arxiv, pubmed, tavily, ...")]
    published: Annotated[
        str | None,
        Field(description="ISO 8601 as precise as known (2024, 2024-03-05); null: undated."),
    ]
    authors: Annotated[list[str], Field(description="As written, 'Given Family', in order.")]
    venue: Annotated[str | None, Field(description="The journal, conference or site.")]
    doi: str | None
    arxiv_id: str | None
    pmid: str | None
    pmcid: str | None
    pdf_url: Annotated[str | None, Field(description="An open-access PDF of it.")]
    open_access: Annotated[bool | None, Field(description="Whether it is free to read.")]
    peer_reviewed: Annotated[
        bool | None, Field(description="False for a preprint; null: not published.")
    ]
    retracted: Annotated[
        bool | None, Field(description="True: retracted (never cited without the mark).")
    ]
    citations: Annotated[int | None, Field(description="The citation count its source gives.")]


def web_meta(provider: str, kind: SourceKind = "web") -> SourceMeta:
    """The record of a hit that knows nothing but who found it (a general web engine's)."""
    return SourceMeta(
        kind=kind,
        provider=provider,
        published=None,
        authors=[],
        venue=None,
        doi=None,
        arxiv_id=None,
        pmid=None,
        pmcid=None,
        pdf_url=None,
        open_access=None,
        peer_reviewed=None,
        retracted=None,
        citations=None,
    )


class CitedSource(TypedDict):
    """A source as the ledger numbers it and the report cites it ``[n]``: the part of
    ``ResearchSource`` the exports read, with its record. ``page`` is the page of a document
    it is (cited as such); ``read_at`` when it was read (a web page's "accessed" date)."""

    n: int
    title: str
    url: str
    kind: Annotated[str, Field(description="page (read) or result (a search hit, unread).")]
    read_at: float | None
    page: int | None
    meta: NotRequired[SourceMeta]


class RunScope(TypedDict):
    """A run's scope in time and place as it began (``--since 'past year'`` resolved to the
    day it meant then, so a resumed run keeps the same window), and the sentence the report
    carries."""

    since: Annotated[str | None, Field(description="ISO date: sources published on or after.")]
    until: Annotated[str | None, Field(description="ISO date: sources published on or before.")]
    domains: Annotated[list[str], Field(description="Only sources on these hosts.")]
    exclude_domains: Annotated[list[str], Field(description="Never sources on these hosts.")]
    said: Annotated[str, Field(description="The scope in a sentence, as the report says it.")]
    first_round_since: NotRequired[
        Annotated[
            str | None,
            Field(
                description="ISO date: the first round's searches look only at sources "
                "published on or after it (a watch: what appeared since its last run); later "
                "rounds search within the rest of the scope."
            ),
        ]
    ]


# A report's references leave the app in these formats: name -> (file extension, MIME type).
# Here, not beside the exporters, so a surface can name them without importing research.
EXPORT_FORMATS: dict[str, tuple[str, str]] = {
    "bibtex": ("bib", "application/x-bibtex; charset=utf-8"),
    "ris": ("ris", "application/x-research-info-systems; charset=utf-8"),
    "csl": ("json", "application/vnd.citationstyles.csl+json; charset=utf-8"),
    "md": ("md", "text/markdown; charset=utf-8"),
    "html": ("html", "text/html; charset=utf-8"),
    "pdf": ("pdf", "application/pdf"),
    "docx": ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
}
# The formats that are the report itself (the rest are its references), and of them the
# ones that are not text: written to a file, never to a terminal.
REPORT_FORMATS = ("md", "html", "pdf", "docx")
BINARY_FORMATS = ("pdf", "docx")
