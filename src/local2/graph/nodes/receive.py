"""``receive``: validate the question, name the turn, start a fresh per-turn record, and
recall what memory holds about the question (:mod:`local2.graph.recall`), in one step."""

from __future__ import annotations

import time
from typing import cast

from langchain_core.messages import HumanMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from local2 import events
from local2.graph.attached import attached_passages, documents_block
from local2.graph.context import TurnContext
from local2.graph.emit import event
from local2.graph.question import validate_query
from local2.graph.recall import recall
from local2.graph.services import Services
from local2.graph.state import RESET, TurnState, TurnUpdate, cleared_compare
from local2.ids import new_query_id, new_session_id, session_id_problem


def unrecorded_turn(state: TurnState, services: Services) -> TurnUpdate:
    """The last turn, if it was published but its process died before checkpointing that.

    ``publish`` writes the turn log first; the checkpoint naming the new head follows. A
    process killed in between leaves the state one turn behind, still holding that turn's
    ``query_id``: adopting the logged turn means nothing already answered is lost.
    """
    query_id, session_id = state.get("query_id"), state.get("session_id")
    if not query_id or not session_id:
        return {}
    head = state.get("history_head")
    found = services.turn_log.find(session_id, query_id)
    if found is None or found.id == head or found.parent_id != head:
        return {}
    return {"history_head": found.id, "turn_count": state.get("turn_count", 0) + 1}


def start_turn(state: TurnState, services: Services, config: RunnableConfig) -> TurnUpdate:
    """Check the question, name the turn, and empty the per-turn record."""
    configurable = config.get("configurable", {})
    recovered = unrecorded_turn(state, services)
    session_id = state.get("session_id") or configurable.get("thread_id") or new_session_id()
    query_id = new_query_id()
    fresh: TurnUpdate = {
        "session_id": session_id,
        "query_id": query_id,
        "started_at": time.time(),
        "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)],
        "thinking": RESET,
        "tool_calls": RESET,
        "memory_hits": RESET,
        "memory_saved": [],
        "document_hits": RESET,
        "pending_tool_calls": [],
        "tool_rounds": 0,
        "repairs": 0,
        "tools_stopped": False,
        "answer": "",
        "critique": None,
        "error": None,
        "decision": "",
        "model": services.model_name,
        "backend": services.backend,
        **cleared_compare(state),
    }
    timing = {"started_at": fresh["started_at"]}
    query = state.get("query")
    # The graph may be invoked directly (notebooks): the session id's rule holds here too.
    problem = session_id_problem(session_id) or validate_query(
        query, services.settings.generator.max_query_chars
    )
    if problem:
        rejected = event(timing, events.QUERY_REJECTED, query_id=query_id, error=problem)
        return {**fresh, **recovered, "error": problem, "event_log": [RESET, rejected]}
    received = event(
        timing,
        events.QUERY_RECEIVED,
        t=0.0,  # the turn's clock starts here, however busy the machine
        session_id=session_id,
        query_id=query_id,
        query=query,
    )
    return {
        **fresh,
        **recovered,
        "query": query.strip(),
        "messages": [*fresh["messages"], HumanMessage(query.strip(), id=f"user-{query_id}")],
        "event_log": [RESET, received],
    }


def receive(state: TurnState, runtime: Runtime[TurnContext], config: RunnableConfig) -> TurnUpdate:
    """The graph's ``receive`` node: :func:`start_turn`, then
    :func:`~local2.graph.recall.recall` on the turn as received, and the passages of the
    session's attached documents (:mod:`local2.graph.attached`), as one update (a
    rejected question recalls nothing). A recall started ahead (the context's
    ``recall_ahead``) is used when it was of this very question."""
    services = runtime.context.services
    received = start_turn(state, services, config)
    if received.get("error"):
        return received
    as_received = cast(TurnState, {**state, **received})
    recalled = recall(as_received, services, runtime.context.recall_ahead)
    update: TurnUpdate = {**received, **recalled}
    update["event_log"] = [*received["event_log"], *recalled.get("event_log", [])]
    if "messages" in recalled:  # the question's message, now carrying the memory block
        update["messages"] = [*received["messages"][:-1], *recalled["messages"]]
    if "memory_hits" in recalled:  # receive emptied the list; recall's hits fill it
        update["memory_hits"] = [RESET, *recalled["memory_hits"]]
    return {**update, **with_documents(as_received, services, update)}


def with_documents(state: TurnState, services: Services, update: TurnUpdate) -> TurnUpdate:
    """The attached documents' passages for the question, before it (and its memories) in
    the question's message, as the turn's document hits."""
    hits, entries = attached_passages(state, services)
    if not entries:
        return {}
    extra: TurnUpdate = {"event_log": [*update["event_log"], *entries]}
    if hits:
        question = update["messages"][-1]
        content = f"{documents_block(hits)}\n\n{question.content}"
        extra["messages"] = [*update["messages"][:-1], HumanMessage(content, id=question.id)]
        extra["document_hits"] = [RESET, *hits]
    return extra
