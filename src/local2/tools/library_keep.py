"""What ``web_fetch`` read, kept in the reader's library (``library.keep``): a research
run's reads with ``research`` or ``all``, a chat turn's with ``all``; nothing with ``off``,
nor for a run started with ``keep: off`` (:attr:`ReadingLibrary.run_keep`), whatever the
setting. A fetch that was refused or failed reaches no keeper. Settings with no data
directory (a bare ``Settings()``) keep nothing: there is nowhere to keep it."""

from __future__ import annotations

from local2.config import Settings
from local2.library import Fetched, Reader, ReadingLibrary
from local2.tools._base import ToolContext


class LibraryKeeper:
    """``web_fetch``'s keeper: which reads to keep, and keeping them."""

    def __init__(self, settings: Settings, library: ReadingLibrary | None = None) -> None:
        self.settings = settings
        self._library = library

    @property
    def library(self) -> ReadingLibrary | None:
        """The process's library over the settings' folder (opened on first use)."""
        if self._library is None and self.settings.system.data_dir is not None:
            self._library = ReadingLibrary.shared(self.settings)
        return self._library

    def wants(self, ctx: ToolContext | None) -> bool:
        library = self.library
        if ctx is None or library is None:
            return False
        mode = library.keep_mode(ctx.session_id)
        return mode == "all" or (mode == "research" and ctx.purpose == "research")

    def keep(self, fetched: Fetched, ctx: ToolContext | None) -> None:
        if ctx is None or self.library is None or not self.wants(ctx):
            return
        if ctx.purpose == "research":
            reader = Reader("research", run_id=ctx.session_id, owner=ctx.owner)
        else:
            reader = Reader(
                "chat", session_id=ctx.session_id, owner=ctx.owner, query_id=ctx.query_id
            )
        self.library.keep(fetched, reader)
