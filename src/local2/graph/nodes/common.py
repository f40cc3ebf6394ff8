"""What every node shares: the injected services and the event emitter."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langgraph.config import get_stream_writer

from local2.config import Settings
from local2.contracts.records import EventEntry
from local2.graph.state import TurnState
from local2.tools.base import Tool, ToolContext
from local2.tools.runner import ToolRunner

if TYPE_CHECKING:
    from local2.storage.turn_log import TurnLog


@dataclass
class Services:
    """Everything a node may call, chosen when the graph is built so any part can be swapped."""

    settings: Settings
    chat_model: BaseChatModel
    turn_log: TurnLog
    tools: dict[str, Tool] = field(default_factory=dict)
    model_name: str = ""
    backend: str = ""
    # False: the model cannot call tools natively (the embedded model, an Ollama model whose
    # capabilities lack ``tools``): tools go in its prompt and the keyword router may help.
    native_tools: bool = True
    memory: Any | None = None  # local2.memory.store.EngramStore
    critic: Any | None = None  # local2.critic.Critic
    tool_parser: Any | None = None  # callable(text, tools) -> ParsedToolCalls
    router: Any | None = None  # callable(query, tool_names) -> list[tool call dicts]
    arg_validator: Any | None = None  # callable(args, schema) -> list[str] errors
    repair_message: Any | None = None  # callable(errors, tools) -> str
    runner: ToolRunner = field(default_factory=ToolRunner)
    # Compare turns: how a second respondent's chat model is made (None: from settings),
    # and where the arena's votes are kept (opened on first use).
    model_factory: Any | None = None  # callable(model, temperature) -> ChatBackend
    votes: Any | None = None  # local2.storage.votes.VoteLog
    notices: list[str] = field(default_factory=list)  # for the person (e.g. memory fallback)


def push(item: dict[str, Any]) -> None:
    """Send an item to LangGraph's custom stream (a no-op outside a graph run)."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run (unit tests of helpers)
        return
    writer(item)


def entry(state: Mapping[str, Any], subject: str, **payload: Any) -> EventEntry:
    """An event entry timed from ``query.received``, not yet sent anywhere.

    ``state`` is the turn's state, or any mapping with ``started_at`` (epoch seconds).
    """
    started = state.get("started_at") or time.time()
    made: EventEntry = {"subject": subject, "t": round(time.time() - started, 3), **payload}
    if "respondent_id" in state:  # a compare turn's respondent: every event says which
        made.setdefault("respondent_id", state["respondent_id"])  # type: ignore[typeddict-item]
    return made


def event(state: Mapping[str, Any], subject: str, **payload: Any) -> EventEntry:
    """Make an event entry (see :func:`entry`) and push it to the custom stream."""
    made = entry(state, subject, **payload)
    push({"event": made})
    return made


def tool_context(state: TurnState) -> ToolContext:
    """The context this turn's tool calls run with: who asks, and the question."""
    return ToolContext(
        session_id=state["session_id"] or "", query_id=state["query_id"], query=state["query"]
    )
