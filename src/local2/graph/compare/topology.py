"""Where comparing and retrying join the chat graph (declared in :mod:`local2.graph.topology`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Literal

from langgraph.graph import END, StateGraph

from local2.graph.compare.pair import compare, critique_pair, ingest_pair, publish_pair, settle_pair
from local2.graph.compare.respond import build_respondent_graph, fan_out, respond
from local2.graph.compare.spec import spec_of
from local2.graph.nodes.common import Services
from local2.graph.nodes.retry import retry_context, retry_of, settle_retry
from local2.graph.state import TurnState


def answer_path(
    config: Mapping[str, Any] | None,
) -> Literal["generate", "compare", "retry_context"]:
    """Who answers: one respondent, two (``compare`` in the config), or a retry."""
    if spec_of(config):
        return "compare"
    if retry_of(config):
        return "retry_context"
    return "generate"


def after_critique(state: TurnState) -> Literal["settle_retry", "__end__"]:
    retry = state.get("retry") or {}
    return "settle_retry" if retry.get("query_id") == state.get("query_id") else END


def add_compare_and_retry(
    graph: StateGraph,
    bind: Callable[[Callable[..., dict]], Callable[..., dict]],
    services: Services,
) -> None:
    graph.add_node("compare", bind(compare))
    graph.add_node("respond", partial(respond, loop=build_respondent_graph(services)))
    graph.add_node("publish_pair", bind(publish_pair))
    graph.add_node("critique_pair", bind(critique_pair))
    graph.add_node("ingest_pair", bind(ingest_pair))
    graph.add_node("settle_pair", bind(settle_pair))
    graph.add_conditional_edges("compare", fan_out, ["respond"])
    graph.add_edge("respond", "publish_pair")
    graph.add_edge("publish_pair", "critique_pair")
    graph.add_edge("publish_pair", "ingest_pair")
    graph.add_edge(["critique_pair", "ingest_pair"], "settle_pair")
    graph.add_edge("settle_pair", END)

    graph.add_node("retry_context", bind(retry_context))
    graph.add_node("settle_retry", bind(settle_retry))
    graph.add_edge("retry_context", "generate")
    graph.add_edge("settle_retry", END)
