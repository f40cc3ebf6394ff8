"""One respondent of a compare turn: the chat graph's generate/tool loop as a subgraph.

The ``respond`` node is sent once per respondent (LangGraph ``Send``), so both run as
parallel branches of one super-step, each with its own working state: messages, thinking,
tool calls, memory hits. The subgraph is the very loop the chat graph runs
(:func:`local2.graph.loop.add_answer_loop`), run with the respondent's context (its own
chat model; tools, memory and the critic shared), and it checkpoints under its own
namespace, so a tool call that waits for approval pauses just
that branch and resumes it. Its events carry ``respondent_id``; its tokens and thinking are
forwarded to the turn's stream as ``{"respondent": {id, kind, text}}`` items.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NotRequired, cast

from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send, StreamMode

from local2.contracts import CompareSpec, Respondent, RespondentSpec
from local2.errors import ModelError
from local2.graph.compare.spec import respondent_services
from local2.graph.context import TurnContext
from local2.graph.emit import push
from local2.graph.loop import add_answer_loop
from local2.graph.state import RESPONDENT_IDS, TurnState, TurnUpdate

# What both respondents start from: the question, its id and clock, the history and the
# working messages after receive (and recall) - the same for both.
SHARED = ("query", "session_id", "query_id", "started_at", "history_head", "messages")


class RespondentState(TurnState):
    respondent_id: str
    respondent_spec: NotRequired[CompareSpec | None]


def build_respondent_graph(default: TurnContext) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The answer loop as a subgraph; :func:`respond` runs it with its respondent's context."""
    graph = StateGraph(RespondentState, context_schema=TurnContext)
    add_answer_loop(graph, default, END)
    graph.add_edge(START, "generate")
    return graph.compile(name="respondent")


def fan_out(state: TurnState) -> list[Send]:
    """Send the question to both respondents, each with its own spec."""
    specs = (state.get("pairwise") or {}).get("specs") or {}
    base = {key: state.get(key) for key in SHARED}
    base["memory_hits"] = list(state.get("memory_hits") or [])
    return [
        Send("respond", {**base, "respondent_id": rid, "respondent_spec": _asked(specs, rid)})
        for rid in RESPONDENT_IDS
    ]


def _asked(specs: dict[str, RespondentSpec], rid: str) -> CompareSpec | None:
    """What the turn asked of respondent ``rid`` (the second one's model and temperature)."""
    spec = specs.get(rid)
    return spec.get("spec") if spec else None


def record_of(values: RespondentState, rid: str, error: str | None = None) -> Respondent:
    """What a respondent's run leaves for the turn: its answer and how it got there."""
    return {
        "respondent_id": rid,
        "model": values.get("model") or "",
        "backend": values.get("backend") or "",
        "answer": "" if error else values.get("answer") or "",
        "thinking": [t for t in values.get("thinking") or [] if t],
        "tool_calls": list(values.get("tool_calls") or []),
        "memory_hits": list(values.get("memory_hits") or []),
        "error": error,
    }


def _forward(rid: str, mode: str, data: Any) -> None:
    """Pass a subgraph stream item on to the turn's stream."""
    if mode == "custom":
        push(data)
        return
    chunk, meta = data
    if meta.get("langgraph_node") != "generate" or not isinstance(chunk, AIMessageChunk):
        return
    reasoning = chunk.additional_kwargs.get("reasoning_content")
    if reasoning:
        push({"respondent": {"id": rid, "kind": "thinking", "text": str(reasoning)}})
    if isinstance(chunk.content, str) and chunk.content:
        push({"respondent": {"id": rid, "kind": "token", "text": chunk.content}})


def respond(
    state: RespondentState,
    runtime: Runtime[TurnContext],
    config: RunnableConfig,
    *,
    loop: CompiledStateGraph[Any, Any, Any, Any],
) -> TurnUpdate:
    """Run one respondent to its answer, with its own services (its chat model). A model
    that fails leaves an ``error`` instead of failing the turn: the other respondent's
    answer still counts."""
    rid = state["respondent_id"]
    own = respondent_services(runtime.context.services, rid, state.get("respondent_spec"))
    context = dataclasses.replace(runtime.context, services=own)
    values = state
    modes: list[StreamMode] = ["custom", "messages", "values"]
    try:
        for mode, data in loop.stream(state, config, context=context, stream_mode=modes):
            if mode == "values":  # the respondent's state, as LangGraph hands it out
                values = cast(RespondentState, data)
            else:
                _forward(rid, mode, data)
    except ModelError as exc:
        message = f"{exc.message} {exc.fix}".strip()
        return {
            "respondents": {rid: record_of(values, rid, error=message)},
            "event_log": list(values.get("event_log") or []),
        }
    return {
        "respondents": {rid: record_of(values, rid)},
        "event_log": list(values.get("event_log") or []),
    }
