"""``critique``: grade the published answer (:mod:`local2.graph.grading`), beside ``ingest``."""

from __future__ import annotations

from langgraph.runtime import Runtime

from local2.graph.context import TurnContext
from local2.graph.grading import grade_turn
from local2.graph.state import TurnState, TurnUpdate


def critique(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    return grade_turn(state, runtime.context.services)
