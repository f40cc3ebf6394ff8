"""``critique``: grade the published answer (:mod:`local2.graph.grading`), beside ``ingest``;
or give way to the person's next question and owe the grade (:mod:`local2.graph.owed`).
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from local2.errors import GaveWay
from local2.graph.context import TurnContext
from local2.graph.grading import grade_turn
from local2.graph.owed import defer
from local2.graph.state import TurnState, TurnUpdate


def critique(state: TurnState, runtime: Runtime[TurnContext], config: RunnableConfig) -> TurnUpdate:
    services = runtime.context.services
    if services.critic is None:
        return {}
    try:
        return grade_turn(state, services, runtime.context.give_way)
    except GaveWay:  # the person's next question came first: graded later
        return defer(state, config, pair=False)
