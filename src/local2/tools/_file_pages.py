"""``read_file`` of a document (PDF, DOCX, PPTX, ODT, EPUB, HTML): a range of its pages.

The document is read by the document worker once (:mod:`local2.files._reading` keeps it), and
``pages`` (``"12"``, ``"12-14"``, ``"12-"``; from the first page when absent) picks what to
show, whole pages while they fit ``files.max_chars``. The result is the file's evidence
header, then each page under its own marker, so an answer can cite ``file, page N`` and the
critic can check the page was read:

    File: my-documents/report.pdf
    sha256: 3b1f...
    document: PDF, 40 pages
    pages: 12-13 of 40 (truncated)
    (more: read_file with pages="14-40")
    ---
    [Page 12 of 40]
    ...
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from local2.documents import page_sections, pages_text
from local2.errors import ToolError
from local2.events import FILE_READ
from local2.files import Documents, FileRef, Sandbox
from local2.tools._base import ToolResult

CUT = "[… truncated]"  # how pages_text ends a page it had to cut (truncate_paragraphs)
_RANGE = re.compile(r"^\s*(\d+)\s*(?:(-|–|to)\s*(\d*)\s*)?$")


def page_range(value: Any, count: int, unit: str = "page") -> tuple[int, int | None]:
    """``(first, last)`` from ``pages`` (``"3"``, ``"3-5"``, ``"3-"``, ``3``); None: the
    first pages. :class:`ToolError` names the form for anything else."""
    if value is None or value == "":
        return 1, None
    found = _RANGE.match(str(value))
    if not found:
        raise ToolError(
            f'pages must be a {unit} or a range, e.g. "3" or "3-5" (the document has '
            f"{count} {unit}s), not {str(value)[:40]!r}"
        )
    first = int(found.group(1))
    if found.group(2) is None:
        return first, first
    return first, int(found.group(3)) if found.group(3) else None


def read_pages(
    sandbox: Sandbox,
    ref: FileRef,
    documents: Documents,
    args: Mapping[str, Any],
    max_chars: int,
) -> ToolResult:
    """The pages of ``ref`` that ``args["pages"]`` names, with their evidence."""
    read = documents.read(sandbox, ref)
    document = read.document
    count, unit = document.page_count, document.unit
    first, last = page_range(args.get("pages"), count, unit)
    try:
        text = pages_text(document, first, last, max_chars=max_chars)
    except ValueError as exc:
        raise ToolError(f"{ref.display}: {exc}") from None
    shown = [n for n, _ in _sections(text)]
    end = min(last or count, count)
    evidence = {
        "path": ref.display,
        "sha256": hashlib.sha256(read.data).hexdigest(),
        "format": document.format,
        "unit": unit,
        "pages_full": count,
        "first_page": shown[0] if shown else first,
        "last_page": shown[-1] if shown else first,
        "chars_full": document.chars,
        "chars_returned": len(text),
        # pages left out for room, or the one page shown cut short
        "truncated": (shown[-1] if shown else first) < end or text.endswith(CUT),
    }
    return ToolResult(
        text=f"{_header(evidence, document.notes, end)}\n---\n{text}",
        data={"evidence": evidence},
        events=[(FILE_READ, dict(evidence))],
    )


def _sections(text: str) -> list[tuple[int, str]]:
    return page_sections(text)


def _header(evidence: Mapping[str, Any], notes: tuple[str, ...], end: int) -> str:
    unit, count = evidence["unit"], evidence["pages_full"]
    first, last = evidence["first_page"], evidence["last_page"]
    label = str(evidence["format"]).upper() if evidence["format"] != "text" else "text"
    lines = [
        f"File: {evidence['path']}",
        f"sha256: {evidence['sha256']}",
        f"document: {label}, {count} {unit}{'s' if count != 1 else ''}",
        f"{unit}s: {first}-{last} of {count}" + (" (truncated)" if evidence["truncated"] else ""),
    ]
    if last < end:
        lines.append(f'(more: read_file with pages="{last + 1}-{end}")')
    elif last < count:
        lines.append(f'(more: read_file with pages="{last + 1}-{count}")')
    lines += [f"note: {note}" for note in notes]
    return "\n".join(lines)
