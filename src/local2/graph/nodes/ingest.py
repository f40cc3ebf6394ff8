"""``ingest``: remember the answered turn (:mod:`local2.graph.remember`), beside ``critique``."""

from __future__ import annotations

from langgraph.runtime import Runtime

from local2.graph.context import TurnContext
from local2.graph.remember import remember_turn
from local2.graph.state import TurnState, TurnUpdate


def ingest(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    update = remember_turn(state, runtime.context.services, runtime.context.give_way)
    if runtime.context.memory_written is not None:
        runtime.context.memory_written()
    return update
