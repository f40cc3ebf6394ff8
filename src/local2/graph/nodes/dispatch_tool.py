"""``dispatch_tool``: announce each requested tool call and start them all at once.

A call the person refused (marked ``denied`` by ``approve``) is announced but never started.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from local2 import events
from local2.graph.context import TurnContext
from local2.graph.emit import event, tool_context
from local2.graph.state import TurnState, TurnUpdate


def dispatch_tool(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    services = runtime.context.services
    ctx = tool_context(state)
    log = []
    for call in state.get("pending_tool_calls", []):
        log.append(
            event(
                state,
                events.tool_request(call["name"]),
                tool=call["name"],
                args=call["args"],
                call_id=call["id"],
            )
        )
        tool = services.tools.get(call["name"])
        if tool is not None and not call.get("denied"):
            services.runner.start(tool, call["args"], ctx, call["id"])
    return {"event_log": log}
