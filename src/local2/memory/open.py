"""Opening memory for a run: the engram store, or None with the reason the person is told.

Memory is never off silently: when the store cannot be opened the app still answers, and the
notice says why memory is off for this run.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from local2.config import Settings

if TYPE_CHECKING:  # chromadb takes seconds to import: only when memory is opened
    from local2.memory.store import EngramStore

log = logging.getLogger(__name__)


def open_memory(settings: Settings) -> EngramStore | None:
    """The engram store, or None with a warning if it cannot be opened: the app still answers."""
    return open_memory_noting(settings)[0]


def open_memory_noting(settings: Settings) -> tuple[EngramStore | None, str | None]:
    """The engram store and what the person must be told about it: that memory runs on a
    fallback embedder, or that it is off for this run and why. Memory is never off silently."""
    if not settings.memory.enabled:
        return None, None
    try:
        from local2.memory.store import EngramStore

        store = EngramStore.open(settings)
    except Exception as exc:
        log.warning("memory disabled for this run: cannot open the engram store: %s", exc)
        return None, (
            f"Memory is off for this run: the engram store under {settings.data_dir} cannot "
            f"be opened ({type(exc).__name__}: {exc})."
        )
    return store, store.notice
