"""A document's text as the model reads it: passages under ``[Page N]`` markers, page
ranges, ``#page=N`` links and the note that opens a fetched document.

Which passages to show is :mod:`local2.retrieval`'s (``pick_passages``); this module only
renders them, with their page, for citations (:func:`page_link`) and for reading on
(:func:`pages_text`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from local2.documents._extract import truncate_paragraphs
from local2.documents._model import FORMAT_LABELS

if TYPE_CHECKING:  # the web page worker imports this module, and not pydantic with the model
    from local2.documents._model import Document

GAP = "[…]"


@dataclass(frozen=True)
class Passage:
    """A passage of a document: the page (slide, chapter) it is on, its place among the
    document's passages (``index``, reading order), and its relevance to the question."""

    page: int
    index: int
    text: str
    score: float


def page_marker(unit: str, page: int, count: int | None = None) -> str:
    """A page's marker line: ``[Page 3]``, ``[Slide 2 of 9]``."""
    of = f" of {count}" if count else ""
    return f"[{unit.capitalize()} {page}{of}]"


def render_passages(passages: Sequence[Passage], unit: str = "page") -> str:
    """Passages as text: a ``[Page N]`` line where the page changes, ``[…]`` where passages
    of one page were left out between two shown."""
    parts: list[str] = []
    previous: Passage | None = None
    for passage in passages:
        if previous is None or passage.page != previous.page:
            parts.append(page_marker(unit, passage.page))
        elif passage.index != previous.index + 1:
            parts.append(GAP)
        parts.append(passage.text)
        previous = passage
    return "\n".join(parts)


def pages_text(
    document: Document, first: int, last: int | None = None, max_chars: int | None = None
) -> str:
    """Pages ``first``..``last`` (inclusive; to the end when ``last`` is None), each under a
    ``[Page N of M]`` line; pages beyond ``max_chars`` are left out, and a last line says
    where to go on. ``ValueError`` names a range outside the document."""
    count = document.page_count
    end = count if last is None else last
    unit = document.unit
    if first < 1 or end < first:
        raise ValueError(f"{unit}s are numbered from 1, first to last: {first}-{end} is no range")
    if first > count:
        raise ValueError(f"the document has {count} {unit}{'s' if count != 1 else ''}")
    end = min(end, count)
    parts: list[str] = []
    size = 0
    for page in document.pages[first - 1 : end]:
        marker = page_marker(unit, page.number, count)
        block = f"{marker}\n{page.text or _empty(document, page.number)}"
        if max_chars is not None and parts and size + len(block) + 2 > max_chars:
            parts.append(
                f"[{unit.capitalize()}s {page.number}-{end} left out: over {max_chars:,} "
                f"characters; ask for them from {unit} {page.number}.]"
            )
            break
        if max_chars is not None and not parts and len(block) > max_chars:
            block = truncate_paragraphs(block, max_chars)
        parts.append(block)
        size += len(block) + 2
    return "\n\n".join(parts)


def _empty(document: Document, number: int) -> str:
    if number in document.no_text_pages:
        return "(no text layer on this page: a scan? OCR did not read it)"
    return "(no text on this page)"


def page_link(url: str, page: int | None) -> str:
    """``url`` opening at ``page``: the PDF open parameter ``#page=N`` (which browsers' PDF
    viewers follow), replacing any fragment; ``url`` unchanged without a page."""
    base = url.split("#", 1)[0]
    return f"{base}#page={page}" if page and page > 0 else url


def document_note(document: Document, url: str) -> str:
    """The line that opens a fetched document's text: what it is and how to cite a page,
    ``[Document: PDF, 40 pages, "Title"; cite a page as <url>#page=N]``."""

    count = document.page_count
    unit = document.unit
    title = f', "{" ".join(document.title.split())[:120]}"' if document.title.strip() else ""
    base = url.split("#", 1)[0]
    cite = f"{base}#page=N" if document.format == "pdf" else f"{base}, {unit} N"
    return (
        f"[Document: {FORMAT_LABELS[document.format]}, {count} {unit}{'s' if count != 1 else ''}"
        f"{title}; cite a {unit} as {cite}]"
    )


_SECTION = re.compile(r"^\[(Page|Slide|Chapter) (\d+)(?: of \d+)?\]$", re.M)


def page_sections(text: str) -> list[tuple[int, str]]:
    """The pages of a document's text as web_fetch, read_file and the document hits render
    it (``[Page N]`` or ``[Page N of M]`` lines, also Slide and Chapter), as ``(N, text)``
    in order; text before the first marker is left out. Research cites ``file, page N``
    with it, and checks a quote against the page it names."""
    found = list(_SECTION.finditer(text))
    sections = []
    for i, marker in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        sections.append((int(marker.group(2)), text[marker.end() : end].strip("\n")))
    return sections
