"""What ``web_fetch`` read, kept in the reader's library (``library.keep``): a research
run's reads with ``research`` or ``all``, a chat turn's with ``all``; nothing with ``off``,
nor for a run started with ``keep: off`` (:attr:`ReadingLibrary.run_keep`), whatever the
setting. A fetch that was refused or failed reaches no keeper."""

from __future__ import annotations

from local2.config import Settings
from local2.library.kept import Fetched, Reader
from local2.library.store import ReadingLibrary
from local2.tools.base import ToolContext


class LibraryKeeper:
    """``web_fetch``'s keeper: which reads to keep, and keeping them."""

    def __init__(self, settings: Settings, library: ReadingLibrary | None = None) -> None:
        self.library = library or ReadingLibrary.shared(settings)

    def wants(self, ctx: ToolContext | None) -> bool:
        if ctx is None:
            return False
        mode = self.library.keep_mode(ctx.session_id)
        return mode == "all" or (mode == "research" and ctx.purpose == "research")

    def keep(self, fetched: Fetched, ctx: ToolContext | None) -> None:
        if ctx is None or not self.wants(ctx):
            return
        if ctx.purpose == "research":
            reader = Reader("research", run_id=ctx.session_id, owner=ctx.owner)
        else:
            reader = Reader("chat", session_id=ctx.session_id, owner=ctx.owner)
        self.library.keep(fetched, reader)
