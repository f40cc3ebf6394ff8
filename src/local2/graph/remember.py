"""Remembering an answered turn, without ever failing it: the chat graph's ``ingest`` node
and research's both remember here.

Runs after ``publish`` beside ``critique``. The turn is stored twice over: as an episodic
record (question and answer, with any text the answer copied from a tool cut out), and as
the short facts distilled from it (:mod:`local2.memory.extract`: the model with a JSON
schema on Ollama, rules elsewhere), each its own ``fact`` engram linked to the turn; a
newer fact supersedes an older one with the same key.

A store that cannot write (full disk, an unwritable directory, a Chroma error, Ollama down
for embedding) emits ``memory.ingest_failed`` and the turn, facts included, waits in
``<data_dir>/memory_retry.jsonl`` (a :class:`~local2.memory.jsonl_queue.JsonlQueue`, safe
for several processes); the queue is retried before the next ingest, so a passing outage
loses nothing.

The turn goes to its owner's memory only (``services.memory_for``). Each person's turns wait
in a queue of their own (``memory_retry.<key>.jsonl``, :mod:`local2.memory.owners`; local's
is the file above), drained by their own next ingest, and each record names its owner, so
a drained turn can only reach the store of the person who said it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

from local2.contracts import LOCAL_NAME
from local2.errors import MemoryStoreError
from local2.events import ANSWER_FALLBACK, MEMORY_INGEST_FAILED, MEMORY_INGESTED
from local2.graph.emit import event
from local2.graph.services import Services
from local2.graph.state import TurnState, TurnUpdate
from local2.memory import (
    Distilled,
    Fact,
    FactRecord,
    JsonlQueue,
    distill,
    only_requests,
    owner_file,
    without_tool_text,
)

if TYPE_CHECKING:  # chromadb takes seconds to import: only when memory is opened
    from local2.memory import EngramStore, FactSaved
    from local2.models import Cancellation

log = logging.getLogger(__name__)

RETRY_FILE = "memory_retry.jsonl"
_FIELDS = {"session_id", "query_id", "query", "answer", "tools_used", "model"}
_OPTIONAL = {"facts", "owner"}


class QueuedTurn(TypedDict):
    """A turn as memory stores it, and as it waits in the retry queue (JSON) when the store
    cannot write: no tool output in it; its facts and owner (a record from before either
    was kept has none)."""

    session_id: str
    query_id: str
    query: str
    answer: str
    tools_used: list[str]
    model: str
    facts: NotRequired[list[FactRecord]]
    owner: NotRequired[str]


def remember_turn(
    state: TurnState, services: Services, give_way: Cancellation | None = None
) -> TurnUpdate:
    """Store this turn and its facts; on failure emit ``memory.ingest_failed`` and queue it.
    ``give_way`` set (the person's next question): a model asked for facts is cancelled and
    the rules' facts are stored, so that the next question waits for milliseconds only."""
    owner = state.get("owner") or LOCAL_NAME
    store = services.memory_for(owner)
    answer = state.get("answer") or ""
    if store is None or not answer.strip() or state.get("error"):
        return {}
    unusable = guard_replaced(state) or _only_the_save(state) or unchecked(state, services)
    if unusable:  # nothing learnt from the reply: only the person's own message is remembered
        state = {**state, "answer": ""}
    distilled = _distill(state, services, give_way)
    record, cut = _turn_record(state, distilled.facts)
    queue = owner_file(Path(services.settings.data_dir) / RETRY_FILE, owner)
    try:
        retried = _drain(services, queue)
        eid, facts = _store(store, record)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        log.warning("memory ingest failed, queued for retry: %s", reason)
        _enqueue(queue, record)
        return {"event_log": [event(state, MEMORY_INGEST_FAILED, error=reason)]}
    payload: dict[str, object] = {  # the memory.ingested event's fields
        "id": eid,
        "facts": [f.id for f in facts],
        "superseded": [old for f in facts for old in f.superseded],
        "extractor": distilled.extractor,
    }
    for key, value in (
        ("answer_not_kept", unusable),
        ("retried", retried),
        ("dropped_facts", distilled.dropped),
        ("fallback", distilled.fallback),
        ("tool_words_cut", cut),
    ):
        if value:
            payload[key] = value
    return {"event_log": [event(state, MEMORY_INGESTED, **payload)]}


def guard_replaced(state: TurnState) -> str | None:
    """Why the answer guard replaced this turn's reply (``answer.fallback``'s reason), if it
    did: the reply was not an answer (raw tool output, a copy of its instructions or of its
    memory, an unrun call, a guess after every lookup failed), and what stands in its place
    is an extract or a failure, not something learnt. Neither is stored as a memory."""
    for entry in state.get("event_log") or []:
        if isinstance(entry, dict) and entry.get("subject") == ANSWER_FALLBACK:
            return str(entry.get("reason") or "replaced")
    return None


UNCHECKED = "no critic can grade the demo model, and what the turn read does not support it"


def unchecked(state: TurnState, services: Services) -> str | None:
    """An answer that nothing can check is not a memory. With a critic, its grade checks
    the answer (one graded failing is left out of recall:
    :func:`local2.memory.ranking.is_bad`). The embedded demo model has none (its critic is
    off: it almost never writes a grade that parses, service/wiring.py), and its prose is
    often wrong or nonsense ("17 * 23 = 429", "I'm sorry for any confusion" over and over).
    Its answer is kept only when what the turn's tools read supports every one of its
    sentences, by the check research's ``verify`` holds a cited sentence to
    (:func:`local2.retrieval.check_support`); else only the person's message is kept. (A
    critic turned off by choice is the person's call: their answers are kept as before.)"""
    if services.critic is not None or services.backend != "embedded":
        return None
    from local2.retrieval import check_support, sentences

    evidence = [c["result"] for c in state.get("tool_calls") or [] if not c.get("error")]
    claims = sentences(state.get("answer") or "")
    if evidence and claims and all(check_support(c, evidence).supported for c in claims):
        return None
    return UNCHECKED


def _only_the_save(state: TurnState) -> str | None:
    """The reply was the save's own confirmation: the fact is stored already."""
    if state.get("memory_saved") and only_requests(state.get("query") or ""):
        return "the reply only confirmed the save"
    return None


def _distill(state: TurnState, services: Services, give_way: Cancellation | None) -> Distilled:
    memory = services.settings.memory
    tools = [c.get("tool", "") for c in state.get("tool_calls") or []]
    return distill(
        state.get("query") or "",
        state.get("answer") or "",
        tools_used=tools,
        chat_model=services.chat_model,
        backend=services.backend,
        mode=memory.facts,
        limit=memory.max_facts_per_turn,
        cancel=give_way,
    )


def _turn_record(state: TurnState, facts: list[Fact]) -> tuple[QueuedTurn, int]:
    """The turn as it is stored (and queued): no tool output in it, even quoted."""
    calls = state.get("tool_calls") or []
    tools = [c.get("tool", "") for c in calls]
    answer, cut = without_tool_text(
        state.get("answer") or "", [(c.get("tool", ""), c.get("result") or "") for c in calls]
    )
    record: QueuedTurn = {
        "session_id": state.get("session_id") or "",
        "query_id": state.get("query_id") or "",
        "query": state.get("query") or "",
        "answer": answer,
        "tools_used": list(dict.fromkeys(t for t in tools if t)),
        "model": state.get("model") or "",
        "facts": [f.as_dict() for f in facts],
        "owner": state.get("owner") or LOCAL_NAME,
    }
    return record, cut


def _store(store: EngramStore, record: QueuedTurn) -> tuple[str | None, list[FactSaved]]:
    """The episodic record (none without an answer to keep), then each fact; safe to repeat
    (both are deduplicated)."""
    eid = (
        None
        if not record["answer"].strip()
        else store.ingest_turn(
            session_id=record["session_id"],
            query_id=record["query_id"],
            query=record["query"],
            answer=record["answer"],
            tools_used=record["tools_used"],
            model=record["model"],
        )
    )
    saved = [
        store.save_fact(
            Fact.from_dict(fact), session_id=record["session_id"], query_id=record["query_id"]
        )
        for fact in record.get("facts") or []
    ]
    return eid, saved


def _drain(services: Services, queue: Path) -> int:
    """Store queued turns, oldest first, each in its owner's memory; stop at the first
    failure (the store is still down)."""
    return _retry_queue(queue).drain(lambda record: _store(_store_of(services, record), record))


def _store_of(services: Services, record: QueuedTurn) -> EngramStore:
    """The memory of the person whose turn ``record`` is (a record from before owners is
    local's); raises when it is not open, so the record stays queued."""
    owner = record.get("owner") or LOCAL_NAME
    store = services.memory_for(owner)
    if store is None:
        raise MemoryStoreError(f"the memory of {owner!r} is not open here", "try again later")
    return store


def _enqueue(queue: Path, record: QueuedTurn) -> None:
    try:
        _retry_queue(queue).append(record)
    except OSError as exc:  # even the queue cannot be written: the turn is lost, say so
        log.error("memory retry queue %s is not writable: %s", queue, exc)


def _retry_queue(path: Path) -> JsonlQueue[QueuedTurn]:
    return JsonlQueue[QueuedTurn](path, valid=lambda r: _FIELDS <= set(r) <= _FIELDS | _OPTIONAL)
