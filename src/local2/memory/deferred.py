"""Ratings and marks given while memory is not open: applied by whoever opens it next.

``local2 feedback`` rates a turn without opening memory: Chroma takes most of a second to
import and open, and an embedded store may be open in the running app anyway. The rating is
recorded in the session at once; its annotation of the turn's engrams waits in
``<data_dir>/memory_annotations.jsonl`` (a :class:`~local2.memory._owners.JsonlQueue`) and
is applied by :meth:`EngramStore.open <local2.memory._store.EngramStore.open>` in any process,
and by a store already open (a running ``ui`` or ``serve``) before its next recall or
listing. The same turn rated twice before then: the newest rating wins. A turn whose engrams
were deleted meanwhile: nothing to annotate, nothing happens.

With memory open (the app, the API) the annotation is made at once, as before, after any
that were waiting, so an older queued rating never overwrites a newer one.

Each person's annotations wait in a file of their own (``memory_annotations.<key>.jsonl``,
:mod:`local2.memory._owners`; local's is the file above): only that person's store drains
it, so a rating can never land on, or be lost in, someone else's memory.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict

from local2.memory._owners import JsonlQueue, is_local, owner_file

if TYPE_CHECKING:
    from local2.config import Settings


class EngramStore(Protocol):
    """What annotations need of the engram store (:class:`local2.memory._store.EngramStore`,
    which applies this module's queue when it opens: it imports this module, not the
    reverse)."""

    def catch_up(self) -> int: ...

    def annotate(
        self, query_id: str, *, critic_score: int | None = None, reward: float | None = None
    ) -> int: ...

    def mark(
        self, engram_id: str | None = None, *, query_id: str | None = None, **fields: Any
    ) -> int: ...


log = logging.getLogger(__name__)

FILE = "memory_annotations.jsonl"
OPS = ("annotate", "mark")


class Annotation(TypedDict):
    """One annotation waiting in the queue: a grade or rating for a turn's engram
    (``annotate``), or metadata for an engram or a turn's engrams (``mark``)."""

    op: str  # annotate | mark
    query_id: str | None
    engram_id: NotRequired[str | None]
    # the engram's Chroma metadata to merge (critic_score, reward, respondent_id, ...)
    fields: dict[str, Any]
    owner: NotRequired[str | None]  # whose, for a reader: the queue's file decides


def _valid(record: Mapping[str, Any]) -> bool:  # a line of the queue, read back (JSON)
    return (
        record.get("op") in OPS
        and isinstance(record.get("fields"), dict)
        and bool(record.get("query_id") or record.get("engram_id"))
    )


def queue_of(settings: Settings, owner: str | None = None) -> JsonlQueue[Annotation]:
    """The queue of ``owner``'s annotations (None: local's)."""
    path = owner_file(Path(settings.data_dir) / FILE, owner)
    return JsonlQueue[Annotation](path, valid=_valid)


def annotate(
    store: EngramStore | None,
    settings: Settings,
    query_id: str,
    *,
    owner: str | None = None,
    **fields: Any,
) -> int | None:
    """:meth:`EngramStore.annotate` the turn now if ``owner``'s memory is open (``store``:
    how many engrams), else queue it for the next open of their memory (None). 0: memory is
    off, nothing will be annotated."""
    record: Annotation = {"op": "annotate", "query_id": query_id, "fields": fields}
    return _now_or_later(store, settings, record, owner)


def mark(
    store: EngramStore | None,
    settings: Settings,
    engram_id: str | None = None,
    *,
    query_id: str | None = None,
    owner: str | None = None,
    **fields: Any,
) -> int | None:
    """:meth:`EngramStore.mark` now if ``owner``'s memory is open (``store``: how many
    engrams), else queue it (None)."""
    record: Annotation = {
        "op": "mark",
        "engram_id": engram_id,
        "query_id": query_id,
        "fields": fields,
    }
    return _now_or_later(store, settings, record, owner)


def _now_or_later(
    store: EngramStore | None, settings: Settings, record: Annotation, owner: str | None
) -> int | None:
    """Apply ``record`` to the open ``store`` (after what waits), or queue it."""
    if store is not None:
        try:
            store.catch_up()
            return _apply(store, record)
        except Exception as exc:  # memory is down: the record waits for it
            log.warning("memory %s deferred, the store failed: %s", record["op"], exc)
    return _defer(settings, record, owner)


def _defer(settings: Settings, record: Annotation, owner: str | None) -> int | None:
    if not settings.memory.enabled:
        return 0
    if not is_local(owner):
        record = {**record, "owner": owner}  # says whose to a reader; the file decides
    try:
        queue_of(settings, owner).append(record)
    except OSError as exc:  # the session keeps the rating; memory will not have it
        log.error("memory annotation lost: %s is not writable: %s", FILE, exc)
        return 0
    return None


def apply(store: EngramStore, queue: JsonlQueue[Annotation]) -> int:
    """Apply every annotation waiting in ``queue`` (the store's own :func:`queue_of`, kept
    so that one process drains it a thread at a time) to ``store``; returns how many."""
    return queue.drain(lambda r: _apply(store, r), compact=newest)


def _apply(store: EngramStore, record: Annotation) -> int:
    """Do one queued or immediate record; how many engrams it touched."""
    if record["op"] == "annotate":  # (no query id: nothing to annotate, as annotate says)
        return store.annotate(record["query_id"] or "", **record["fields"])
    return store.mark(record.get("engram_id"), query_id=record.get("query_id"), **record["fields"])


def newest(records: list[Annotation]) -> list[Annotation]:
    """One record per target, its fields merged oldest to newest: the newest value wins."""
    merged: dict[tuple[str, str | None, str | None], Annotation] = {}
    for record in records:
        key = (record["op"], record.get("query_id"), record.get("engram_id"))
        before = merged[key]["fields"] if key in merged else {}
        merged[key] = {**record, "fields": {**before, **record["fields"]}}
    return list(merged.values())
