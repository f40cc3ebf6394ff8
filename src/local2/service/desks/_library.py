"""The library of what was read, as every surface handles it (``local2 library``,
``GET/DELETE /library``, the app's Library tab): list, search, show, pin, remove, export,
import. Each call is one person's and touches only their library: another person's id
answers as an unknown one does (:class:`~local2.errors.UnknownLibraryEntry`, 404)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from local2.config import Settings
from local2.contracts import WEB_FETCH, LibraryEntry, LibraryHit, LibraryPage, Person
from local2.library import ReadingLibrary, export_library, import_library

log = logging.getLogger(__name__)


class LibraryDesk:
    """The library part of the service (``agent.library``)."""

    def __init__(self, settings: Settings, library: ReadingLibrary | None = None) -> None:
        self.settings = settings
        self.library = library or ReadingLibrary.shared(settings)

    @property
    def keep(self) -> str:
        """What is kept (``library.keep``: all, research or off)."""
        return self.settings.library.keep

    def settle(self, timeout_s: float | None = None) -> bool:
        """Wait until what was kept is indexed (False: ``timeout_s`` passed first)."""
        return self.library.settle(timeout_s)

    def entries(self, person: Person, limit: int | None = None) -> list[LibraryEntry]:
        """The person's entries, the last read first."""
        found = self.library.entries(person.name)
        return found[:limit] if limit else found

    def get(self, person: Person, entry_id: str) -> LibraryEntry:
        return self.library.get(person.name, entry_id)

    def page(self, person: Person, entry_id: str, page: int | None = None) -> LibraryPage:
        """The entry's kept text (untrusted: as it was read), all of it or one page."""
        return self.library.page(person.name, entry_id, page)

    def original(self, person: Person, entry_id: str) -> Path | None:
        """The entry's original file (a document's), or None."""
        return self.library.original(person.name, entry_id)

    def pin(self, person: Person, entry_id: str, pinned: bool = True) -> LibraryEntry:
        return self.library.pin(person.name, entry_id, pinned)

    def remove(self, person: Person, entry_id: str) -> LibraryEntry:
        """Take the entry out of the person's index and off the disk."""
        return self.library.remove(person.name, entry_id)

    def search(self, person: Person, query: str, k: int | None = None) -> list[LibraryHit]:
        return self.library.search(person.name, query, k)

    def turn_read(self, state: Mapping[str, Any]) -> None:
        """A chat turn ended: the pages it read and kept (``library.keep: all``) that its
        answer names by URL are recorded as cited by that turn."""
        session, query = state.get("session_id"), state.get("query_id")
        fetched = any(
            c.get("tool") == WEB_FETCH and not c.get("error") for c in state.get("tool_calls") or []
        )
        if not (fetched and session and query) or self.library.keep_mode(session) != "all":
            return
        # lazy: langchain_core, pydantic, local2.models: ~525 ms, 547 modules at MCP start
        from local2.critic import find_urls

        urls = find_urls(str(state.get("answer") or ""))
        try:
            if urls:
                self.library.cite_turn(state.get("owner"), str(session), str(query), urls)
        except Exception as exc:  # the turn stands; only its note in the library is lost
            log.warning("library: could not record the citations of turn %s: %s", query, exc)

    def export(self, person: Person) -> bytes:
        """The person's library as a zip: a JSON index, the texts and the originals."""
        return export_library(self.library, person.name)

    def import_(self, person: Person, data: bytes) -> list[str]:
        """File an export's entries in the person's library; their ids."""
        return import_library(self.library, person.name, data)


def open_library(settings: Settings) -> LibraryDesk:
    """A desk for a command that opens no agent (``local2 library``)."""
    return LibraryDesk(settings)
