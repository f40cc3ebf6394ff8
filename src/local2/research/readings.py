"""What a step's tool result brings into the evidence ledger: every read, under its label.

A web search's hits and a file search's hits are sources *found* (``result``: the snippet is
their text); a read is a source *read* (``page``). Results of the known shapes are read as
such (``web_fetch``'s ``URL:`` / ``Extracted text:``, ``read_file``'s ``File:`` header);
any other tool's result is one source, named by the argument that says what it reads, or
by the call itself. A result that marks its pages (``[Page N]`` or ``[Page N of M]`` lines,
also slides and chapters, as ``web_fetch`` of a document and ``read_file`` write them: read
by :func:`local2.documents.page_sections`) is filed page by page, each under
``<label>#page=N``, so a citation names the file and the page, and is verified against that
page's text only.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from local2.documents import page_link, page_sections
from local2.research._state import Found, StepTool, is_url, page_read, search_hits

_FILE_HIT = re.compile(
    r"^\[\d+\]\s+(?P<label>[^\n]+?)(?:\s+\((?P<note>[^)\n]*)\))?[ \t]*\n"
    r"(?P<snippet>(?:[ \t]+\S.*(?:\n|$))+)",
    re.MULTILINE,
)
_FILE_HEADER = re.compile(r"\AFile:\s*(?P<path>[^\n]+)\n(?:.*?\n)?---\n(?P<text>.*)\Z", re.DOTALL)
_HIT_PAGE = re.compile(r"^(?P<path>.+?), (?:page|slide|sheet|section|chapter) (?P<n>\d+)$", re.I)


def listed_hits(text: str, step: str, tool: str, at: float) -> list[Found]:
    """Hits of a listing that numbers them (``[1] notes/a.md (lines 3-9, ...)`` and an
    indented snippet under each), as ``search_files`` writes them; a hit in a document's page
    (``[1] docs/report.pdf, page 12 (...)``) is that page, ``docs/report.pdf#page=12``."""
    found: list[Found] = []
    for m in _FILE_HIT.finditer(text):
        label = m.group("label").strip()
        paged = _HIT_PAGE.match(label)
        page = int(paged.group("n")) if paged else None
        found.append(
            Found(
                url=page_link(paged.group("path"), page) if paged else label,
                title=label,
                text=" ".join(m.group("snippet").split()),
                kind="result",
                at=at,
                step=step,
                tool=tool,
                page=page,
            )
        )
    return found


def split_label(label: str) -> tuple[str, int | None]:
    """``docs/report.pdf#page=12`` as ``("docs/report.pdf", 12)``; any other label whole."""
    base, _, fragment = label.partition("#page=")
    return (base, int(fragment)) if fragment.isdigit() else (label, None)


def split_pages(text: str) -> list[tuple[int | None, str]]:
    """``text`` as ``(page, text)`` pieces by its page markers; ``[(None, text)]`` without."""
    pages: list[tuple[int | None, str]] = [(n, body) for n, body in page_sections(text)]
    return [(n, body) for n, body in pages if body.strip()] or [(None, text)]


def _read(label: str, title: str, text: str, step: str, tool: str, at: float) -> list[Found]:
    """One read source, or one per page when the text marks its pages."""
    base, asked = split_label(label)  # the page the call asked for, when its text names none
    paged = _HIT_PAGE.match(title)  # a hit's title names its page: the file's name is before
    name = (paged.group("path") if paged else title) or PurePosixPath(base).name or label
    found: list[Found] = []
    for marked, body in split_pages(text.strip()):
        page = marked or asked
        found.append(
            Found(
                url=page_link(label, page),
                title=f"{name}, page {page}" if page else name,
                text=body,
                kind="page",
                at=at,
                step=step,
                tool=tool,
                page=page,
            )
        )
    return found


def found_in(
    tool: StepTool, args: Mapping[str, Any], text: str, step: str, title: str = ""
) -> list[Found]:
    """The sources one call's result ``text`` found or read (see the module docstring)."""
    at = time.time()
    if tool.finder:
        hits = search_hits(text, step, at) if tool.finds_urls else []
        for hit in hits:
            hit["tool"] = tool.name
        return hits or listed_hits(text, step, tool.name, at)
    label = tool.label(args)
    if args.get("pages") and str(args["pages"]).isdigit():  # one page of a document, asked for
        label = page_link(label, int(str(args["pages"])))
    if tool.takes_urls and is_url(label):
        page = page_read(text, label, step, title, at)
        if page is not None and not page_sections(page["text"]):
            page["tool"] = tool.name
            return [page]
        if page is not None:  # a document web_fetch read: its pages, each under #page=N
            return _read(label, title or page["title"], page["text"], step, tool.name, at)
    header = _FILE_HEADER.match(text.strip())
    if header is not None:  # read_file's evidence header, then the text
        named = label if tool.target else header.group("path").strip()
        return _read(named, title, header.group("text"), step, tool.name, at)
    return _read(label, title, text, step, tool.name, at) if text.strip() else []
