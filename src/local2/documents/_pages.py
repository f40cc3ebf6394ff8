"""Pages built up as a reader goes, checked against the page and character limits.

A reader that knows its page count up front (PDF, PPTX, EPUB) checks it before reading
anything; a flowing document (DOCX, ODT, text) starts a new page at each break. Either way
the document is refused the moment it passes ``max_pages`` or ``max_chars``, so a hostile
one never gets to build the rest.
"""

from __future__ import annotations

from local2.documents._model import UNITS, Format, Limits, Page
from local2.documents._problems import over_limit
from local2.errors import DocumentUnreadable


def check_page_count(count: int, fmt: Format, limits: Limits) -> None:
    """Refuse a document of more pages (slides, chapters) than ``max_pages``."""
    if count > limits.max_pages:
        raise too_many_pages(count, fmt, limits)


def too_many_pages(
    count: int, fmt: Format, limits: Limits, more: bool = False
) -> DocumentUnreadable:
    unit = UNITS[fmt]
    has = f"more than {limits.max_pages:,}" if more else f"{count:,}"
    return over_limit(
        "too_many_pages",
        f"The document has {has} {unit}s, over the limit of {limits.max_pages:,}",
        "max_pages",
    )


class PageBuilder:
    """Text gathered page by page; ``pages()`` gives them numbered from 1."""

    def __init__(self, fmt: Format, limits: Limits) -> None:
        self.fmt = fmt
        self.limits = limits
        self._done: list[Page] = []
        self._current: list[str] = []
        self._chars = 0

    def write(self, text: str) -> None:
        """Add text to the current page."""
        if not text:
            return
        self._chars += len(text)
        if self._chars > self.limits.max_chars:
            raise over_limit(
                "too_many_chars",
                f"The document has more than {self.limits.max_chars:,} characters of text, "
                "over the limit",
                "max_chars",
            )
        self._current.append(text)

    def add_page(self, text: str, ocr: bool = False) -> None:
        """A whole page at once (the current one must be empty)."""
        self.write(text)
        self.break_page(ocr)

    def break_page(self, ocr: bool = False) -> None:
        """End the current page; the next text goes on a new one."""
        if len(self._done) >= self.limits.max_pages:
            raise too_many_pages(len(self._done) + 1, self.fmt, self.limits, more=True)
        self._done.append(Page(len(self._done) + 1, tidy("".join(self._current)), ocr))
        self._current = []

    def pages(self) -> tuple[Page, ...]:
        """Every page, the one in progress ended (a flowing document's last page)."""
        if self._current or not self._done:
            self.break_page()
        return tuple(self._done)


def tidy(text: str) -> str:
    """Trailing spaces off each line, runs of blank lines down to one, ends stripped."""
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()
