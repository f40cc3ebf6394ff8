"""``approve``: the tool calls that need the person wait for them (docs/architecture.md, "Trust
boundaries").

Which calls wait is :func:`local2.tools.trust.review`. If any do, the graph pauses here with
LangGraph's ``interrupt()`` (the checkpoint keeps the request, so the turn can be resumed
later, from another process, or replayed). On resume the node runs again from the top and
``interrupt()`` returns the answer; refused calls are marked ``denied`` so ``dispatch_tool``
does not start them and ``await_tool`` tells the model they were refused.
"""

from __future__ import annotations

from langgraph.errors import GraphInterrupt
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from local2 import events
from local2.contracts import approval
from local2.graph.context import TurnContext
from local2.graph.emit import entry, event, push
from local2.graph.state import TurnState, TurnUpdate
from local2.tools import review


def approve(state: TurnState, runtime: Runtime[TurnContext]) -> TurnUpdate:
    services = runtime.context.services
    calls = state.get("pending_tool_calls") or []
    if not calls or services.settings.tools.approval == "never":
        return {}
    history = services.turn_log.window(
        state.get("history_head"), services.settings.generator.max_turns
    )
    needs = review(state, services.tools, services.settings.tools, [t.user for t in history])
    if not needs:
        return {}
    asked = [
        entry(
            state,
            events.TOOL_APPROVAL_REQUESTED,
            tool=need.tool,
            args=need.args,
            call_id=need.call_id,
            reason=need.reason,
            after=need.as_dict()["after"],
        )
        for need in needs
    ]
    request = approval.make_request(state, [n.as_dict() for n in needs], asked)
    try:
        value = interrupt(request)
    except GraphInterrupt:  # the first pass: announce what waits, then pause
        for made in asked:
            push({"event": made})
        raise
    decisions, by, echoed = approval.read_answer(value, [n.call_id for n in needs])
    decided = []
    marked = []
    for call in calls:
        allowed = decisions.get(str(call.get("id")))
        if allowed is None:  # this call did not need asking
            marked.append(call)
            continue
        subject = events.TOOL_APPROVAL_GRANTED if allowed else events.TOOL_APPROVAL_DENIED
        decided.append(event(state, subject, tool=call["name"], call_id=call["id"], by=by))
        marked.append(call if allowed else {**call, "denied": by})
    # The request's own entries (timed when it was made) join the checkpointed log now.
    return {"pending_tool_calls": marked, "event_log": [*(echoed or asked), *decided]}
