"""What a read leaves to keep: the source as it was read, and who read it.

Made by ``web_fetch`` when a fetch succeeds (a refused or failed fetch makes none) and by an
import; the library files it under its content's hash, so a page read twice is one entry
with two readings.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

PAGE_MARK = "[Page {n}]"  # how a kept text marks its pages (documents.page_sections reads it)


@dataclass(frozen=True)
class Fetched:
    """One source as it was read: its text page by page, and a document's original file."""

    url: str  # as asked for
    final_url: str  # after redirects
    title: str
    format: str  # html, text, pdf, docx, pptx, odt, epub
    pages: tuple[tuple[int, str], ...]  # (page, text); a web page is page 1
    original: bytes | None = None  # a document's file as downloaded
    content_type: str = ""

    @property
    def text(self) -> str:
        """The whole text, a document's pages each under its marker."""
        if len(self.pages) == 1 and self.original is None:
            return self.pages[0][1]
        return "\n\n".join(f"{PAGE_MARK.format(n=n)}\n{text}" for n, text in self.pages)

    @property
    def sha256(self) -> str:
        """The content's hash: a document's file, a page's text (markup that changes on
        every load, a date or an ad, does not make a new entry)."""
        data = self.original if self.original is not None else self.text.encode("utf-8")
        return hashlib.sha256(data).hexdigest()

    @property
    def site(self) -> str:
        try:
            return urlsplit(self.url).hostname or ""
        except ValueError:
            return ""


@dataclass(frozen=True)
class Reader:
    """Who read it: a research run (``run_id``) or a chat turn (``session_id`` and the
    turn's ``query_id``)."""

    by: str  # research | chat | import
    run_id: str | None = None
    session_id: str | None = None
    owner: str | None = None
    cited: tuple[int, ...] = field(default=())
    query_id: str | None = None


def entry_id(owner_key: str, sha256: str) -> str:
    """The entry's id: the same content is the same entry (per person: ids never tell one
    person's library from another's)."""
    return "lib-" + hashlib.sha256(f"{owner_key}\n{sha256}".encode()).hexdigest()[:12]
