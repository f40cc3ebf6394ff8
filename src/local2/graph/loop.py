"""The answer loop: generate -> approve -> dispatch_tool -> await_tool -> generate.

Declared once: the chat graph runs it before ``publish`` (:mod:`local2.graph.topology`), and
each respondent of a compare turn runs it as its own subgraph
(:mod:`local2.graph.compare.respond`).
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import StateGraph

from local2.graph.context import TurnContext, contextual
from local2.graph.nodes.approve import approve
from local2.graph.nodes.await_tool import await_tool
from local2.graph.nodes.dispatch_tool import dispatch_tool
from local2.graph.nodes.generate import generate
from local2.graph.state import TurnState


def after_generate(state: TurnState) -> Literal["approve", "generate", "publish"]:
    decision = state.get("decision")
    if decision == "dispatch_tool":
        return "approve"  # every tool call passes the person's gate first
    if decision == "generate":
        return "generate"  # repair a malformed tool call or an empty reply
    return "publish"


def add_answer_loop(
    graph: StateGraph[Any, TurnContext, Any, Any], default: TurnContext, done: str
) -> None:
    """The loop's nodes and edges, until an answer goes to ``done``."""
    graph.add_node("generate", contextual(generate, default))
    graph.add_node("approve", contextual(approve, default))
    graph.add_node("dispatch_tool", contextual(dispatch_tool, default))
    graph.add_node("await_tool", contextual(await_tool, default))
    graph.add_conditional_edges(
        "generate",
        after_generate,
        {"approve": "approve", "generate": "generate", "publish": done},
    )
    graph.add_edge("approve", "dispatch_tool")
    graph.add_edge("dispatch_tool", "await_tool")
    graph.add_edge("await_tool", "generate")
