"""Cited pages: an answer that cites a document's page must cite one whose text it was given.

web_fetch, read_file and the turn's document hits render a document's text under page
markers (``[Page 12]``, ``[Page 12 of 40]``: :func:`local2.documents.page_sections`), after a
first line naming the document (``URL: <url>`` or ``File: <path>``). A citation of
``<url>#page=N``, or of ``report.pdf, page N`` (also ``p. N``, ``(page N)``, slides and
chapters), is flagged when that document's text was read this turn but page N was not among
its pages: the model read pages 3 and 4 and cites page 12.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from local2.contracts import ToolCallRecord
from local2.documents import page_sections

_SOURCE = re.compile(r"\A(?:URL|File): (?P<source>\S+)")
_FRAGMENT_PAGE = re.compile(r"(?:^|&)page=(\d+)\b")
_FILE_PAGE = re.compile(
    r"(?P<path>[\w./~-]*\w\.(?:pdf|docx|pptx|odt|epub|html?|md|txt))[`*_\"')\]]*"
    r"\s*(?:,|:|\(|–|—|-)?\s*(?:page|p\.|slide|chapter)\s*(?P<page>\d+)",
    re.IGNORECASE,
)


def pages_read(evidence: Iterable[ToolCallRecord]) -> dict[str, set[int]]:
    """For each document whose text a tool returned this turn (its URL or file path as the
    result's first line names it), the numbers of the pages that text held."""
    found: dict[str, set[int]] = {}
    for call in evidence:
        result = str(call.get("result") or "")
        source = _SOURCE.match(result)
        sections = page_sections(result) if source and not call.get("error") else []
        if source and sections:
            found.setdefault(source["source"], set()).update(n for n, _ in sections)
    return found


def unread_pages(
    answer: str,
    evidence: list[ToolCallRecord],
    urls: Iterable[str],
    url_key: Callable[[str], str],
) -> list[str]:
    """Flags for the pages ``answer`` cites of documents read this turn but not those pages
    (``urls`` are the answer's URLs, ``url_key`` how two spellings of one are compared)."""
    read = pages_read(evidence)
    if not read:
        return []
    by_url = {url_key(source): pages for source, pages in read.items() if "://" in source}
    flags = []
    for url in urls:
        page = _FRAGMENT_PAGE.search(urlsplit(url).fragment)
        pages = by_url.get(url_key(url))
        if page and pages is not None and int(page.group(1)) not in pages:
            flags.append(_flag(url, int(page.group(1)), pages))
    files = {source: pages for source, pages in read.items() if "://" not in source}
    for match in _FILE_PAGE.finditer(answer):
        pages = _file_pages(match["path"], files)
        number = int(match["page"])
        if pages is not None and number not in pages:
            flags.append(_flag(f"{match['path']}, page {number}", number, pages))
    return list(dict.fromkeys(flags))


def _file_pages(cited: str, files: dict[str, set[int]]) -> set[int] | None:
    """The pages read of the file ``cited`` names (its path, or its name alone)."""
    cited = cited.removeprefix("./")
    for path, pages in files.items():
        if path == cited or path.endswith(f"/{cited}") or PurePosixPath(path).name == cited:
            return pages
    return None


def _flag(cited: str, page: int, pages: set[int]) -> str:
    read = ", ".join(str(n) for n in sorted(pages)[:12])
    return f"unread page: {cited} (page {page} was not among the pages read: {read})"
