"""``ingest``: remember the answered turn, without ever failing the turn.

Runs after ``publish`` beside ``critique``. A store that cannot write (full disk, an
unwritable directory, a Chroma error, Ollama down for embedding) emits
``memory.ingest_failed`` and the turn waits in ``<data_dir>/memory_retry.jsonl``; the queue
is retried before the next ingest, so a passing outage loses nothing.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local2.config import Settings
from local2.events import MEMORY_INGEST_FAILED, MEMORY_INGESTED
from local2.nodes.common import Services, event
from local2.state import TurnState

if TYPE_CHECKING:  # chromadb takes a second to import: only when memory is opened
    from local2.memory.store import EngramStore

log = logging.getLogger(__name__)

RETRY_FILE = "memory_retry.jsonl"
_queue_lock = threading.Lock()
_FIELDS = {"session_id", "query_id", "query", "answer", "tools_used", "model"}


def open_memory(settings: Settings) -> EngramStore | None:
    """The engram store, or None with a warning if it cannot be opened: the app still answers."""
    if not settings.memory.enabled:
        return None
    from local2.memory.store import EngramStore

    try:
        return EngramStore.open(settings)
    except Exception as exc:
        log.warning("memory disabled for this run: cannot open the engram store: %s", exc)
        return None


def ingest(state: TurnState, services: Services) -> dict[str, Any]:
    """Store this turn as an engram; on failure emit ``memory.ingest_failed`` and queue it."""
    store = services.memory
    answer = state.get("answer") or ""
    if store is None or not answer.strip() or state.get("error"):
        return {}
    record = _turn_record(state)
    queue = Path(services.settings.data_dir) / RETRY_FILE
    try:
        retried = _drain(store, queue)
        eid = _store(store, record)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        log.warning("memory ingest failed, queued for retry: %s", reason)
        _enqueue(queue, record)
        return {"event_log": [event(state, MEMORY_INGEST_FAILED, error=reason)]}
    payload: dict[str, Any] = {"id": eid}
    if retried:
        payload["retried"] = retried
    return {"event_log": [event(state, MEMORY_INGESTED, **payload)]}


def _turn_record(state: TurnState) -> dict[str, Any]:
    tools = [c.get("tool", "") for c in state.get("tool_calls") or []]
    return {
        "session_id": state.get("session_id") or "",
        "query_id": state.get("query_id") or "",
        "query": state.get("query") or "",
        "answer": state.get("answer") or "",
        "tools_used": list(dict.fromkeys(t for t in tools if t)),
        "model": state.get("model") or "",
    }


def _store(store: EngramStore, record: dict[str, Any]) -> str:
    return store.ingest_turn(**record)


def _drain(store: EngramStore, queue: Path) -> int:
    """Store queued turns, oldest first; stop at the first failure (the store is still down)."""
    with _queue_lock:
        pending = _read_queue(queue)
        if not pending:
            return 0
        done = 0
        try:
            for record in pending:
                _store(store, record)
                done += 1
        finally:
            _write_queue(queue, pending[done:])
        return done


def _enqueue(queue: Path, record: dict[str, Any]) -> None:
    with _queue_lock:
        try:
            queue.parent.mkdir(parents=True, exist_ok=True)
            with queue.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        except OSError as exc:  # even the queue cannot be written: the turn is lost, say so
            log.error("memory retry queue %s is not writable: %s", queue, exc)


def _read_queue(queue: Path) -> list[dict[str, Any]]:
    try:
        lines = queue.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        if isinstance(record, dict) and set(record) == _FIELDS:
            records.append(record)
        else:
            log.warning("memory retry queue: dropping a malformed line")
    return records


def _write_queue(queue: Path, records: list[dict[str, Any]]) -> None:
    if not records:
        queue.unlink(missing_ok=True)
        return
    tmp = queue.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    tmp.replace(queue)
