"""``generate``: one chat-model call, then decide what happens next.

The reply is split into thinking and answer; tool calls are taken natively, else parsed from
text; for a model that cannot call tools natively the keyword router proposes calls on the
first round (a tool-capable model's choice is never overridden). A malformed call gets one
repair message; an echo of the tool template is not a call. A call identical to one already
run this turn is answered from the first result and ends the tool loop, as does
``max_tool_iterations``: the model must then answer from what it gathered. A final reply that
is raw tool output, a template echo or an unexecuted call is never shown: a labelled extract
of the tool results replaces it.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from local2 import events
from local2.contracts import EventEntry, PendingCall
from local2.graph.answer_guard import (
    RAW_OUTPUT,
    TEMPLATE_ECHO,
    TOOLS_FAILED,
    UNEXECUTED_CALL,
    echoes_template,
    every_call_failed,
    fallback_answer,
    honest_failure,
    prose_beside_call,
    unusable_reason,
    without_listing_lines,
    wrap_untrusted,
)
from local2.graph.context import TurnContext
from local2.graph.emit import event
from local2.graph.model_call import call_model
from local2.graph.prompt import build_prompt
from local2.graph.recall import confirmation
from local2.graph.services import Services
from local2.graph.state import TurnState, TurnUpdate
from local2.ids import new_call_id
from local2.memory import only_requests
from local2.models import REPETITION_NOTE, thinking_and_answer

FORCED_SYNTHESIS = (
    "You have used all the tool calls allowed for this question. Do not call any more tools: "
    "answer now from what you have gathered, and say what is still uncertain."
)
REPEATED_CALLS = (
    "You already made that tool call in this turn; its result is repeated above. Do not call "
    "any more tools: answer the question now from the results you have."
)
EMPTY_NUDGE = "Your reply was empty. Please answer the question now."
EMPTY_ANSWER = "(The model returned an empty answer.)"


def _native_calls(reply: AIMessage) -> list[PendingCall]:
    return [
        {"name": c["name"], "args": dict(c.get("args") or {}), "id": c.get("id") or new_call_id()}
        for c in reply.tool_calls
    ]


def _invalid_native_args(services: Services, calls: list[PendingCall]) -> list[str]:
    if services.arg_validator is None:
        return []
    errors: list[str] = []
    for call in calls:
        tool = services.tools.get(call["name"])
        if tool is not None:
            errors.extend(
                f"{call['name']}: {e}"
                for e in services.arg_validator(call["args"], tool.parameters)
            )
    return errors


def _call_key(name: str, args: Any) -> str:
    return json.dumps([name, args], sort_keys=True, default=str)


def _answer_repeats(state: TurnState, calls: list[PendingCall]) -> list[BaseMessage]:
    """For calls already run this turn: the call message and the first result, not re-run."""
    first = {_call_key(r["tool"], r["args"]): r for r in state.get("tool_calls") or []}
    ai = AIMessage(
        content="",
        tool_calls=[
            {"name": c["name"], "args": c["args"], "id": c["id"], "type": "tool_call"}
            for c in calls
        ],
    )
    results = [
        ToolMessage(
            wrap_untrusted(c["name"], first[_call_key(c["name"], c["args"])]["result"]),
            tool_call_id=c["id"],
            name=c["name"],
        )
        for c in calls
    ]
    return [ai, *results, HumanMessage(REPEATED_CALLS)]


def _final_answer(
    state: TurnState, services: Services, written: str, text: str, log: list[EventEntry]
) -> str:
    """The answer the person sees: the model's, unless it is not an answer at all."""
    schemas = {n: t.parameters for n, t in services.tools.items()}
    trimmed, cut = without_listing_lines(written)
    if cut:
        log.append(event(state, events.ANSWER_TRIMMED, lines=cut))
        written, text = trimmed, without_listing_lines(text)[0]
    if cut and not written.removesuffix(REPETITION_NOTE).strip():  # nothing but the listing
        reason: str | None = RAW_OUTPUT
    else:
        reason = unusable_reason(written, schemas) if written.strip() else None
    if reason is None:
        return text
    prose = prose_beside_call(written, schemas) if reason == UNEXECUTED_CALL else None
    if prose:
        return prose
    log.append(event(state, events.ANSWER_FALLBACK, reason=reason, chars=len(written)))
    return fallback_answer(reason, list(state.get("tool_calls") or []), services.tools)


def _ask(
    state: TurnState, services: Services, config: RunnableConfig
) -> tuple[AIMessage, bool, list[BaseMessage], list[EventEntry]]:
    """Call the model over the prompt: ``(reply, tools offered, new messages, events)``. At
    ``max_tool_iterations`` no tools are offered and the model is told to answer now."""
    gen = services.settings.generator
    rounds = state.get("tool_rounds", 0)
    forced = bool(services.tools) and rounds >= gen.max_tool_iterations
    use_tools = bool(services.tools) and not forced and not state.get("tools_stopped")
    new_messages: list[BaseMessage] = []
    log: list[EventEntry] = []
    if forced and not state.get("tools_stopped"):
        log.append(
            event(state, events.TOOL_LOOP_LIMIT, limit=gen.max_tool_iterations, rounds=rounds)
        )
        new_messages.append(HumanMessage(FORCED_SYNTHESIS, id=f"forced-{state['query_id']}"))
    history = services.turn_log.window(state.get("history_head"), gen.max_turns)
    working = [*state.get("messages", []), *new_messages]
    prompt = build_prompt(gen.system_prompt, history, working, gen.history_token_budget)
    return call_model(services, prompt, config, tools=use_tools), use_tools, new_messages, log


def _proposed_calls(
    state: TurnState,
    services: Services,
    reply: AIMessage,
    text: str,
    use_tools: bool,
    log: list[EventEntry],
) -> tuple[list[PendingCall], str, list[str]]:
    """The calls the reply makes, natively or written as text: ``(calls, text, errors)``; a
    copy of the prompt's tool template is not a malformed call."""
    gen = services.settings.generator
    calls = _native_calls(reply) if use_tools else []
    errors = _invalid_native_args(services, calls)
    written = text
    if errors:
        calls = []
    elif use_tools and not calls and gen.text_tool_calls and services.tool_parser is not None:
        parsed = services.tool_parser(text, {n: t.parameters for n, t in services.tools.items()})
        calls, text, errors = parsed.calls, parsed.text, parsed.errors
    if errors and not calls and echoes_template(written, list(services.tools)):
        log.append(event(state, events.TOOL_TEMPLATE_ECHO, chars=len(written)))
        errors = []
    return calls, text, errors


def _routed(
    state: TurnState, services: Services, use_tools: bool, log: list[EventEntry]
) -> list[PendingCall]:
    """For a model without native tool calls, on the first round: the keyword router's calls
    (never a second save of what the person asked to be remembered)."""
    gen = services.settings.generator
    first = state.get("tool_rounds", 0) == 0
    if not (use_tools and first and not services.native_tools and gen.keyword_router):
        return []
    if services.router is None:
        return []
    calls = services.router(state["query"], services.tools.values())
    if any(not saved.get("error") for saved in state.get("memory_saved") or []):
        calls = [c for c in calls if c["name"] != "save_memory"]
    if calls:
        log.append(event(state, events.TOOL_ROUTED, tools=[c["name"] for c in calls]))
    return calls


def _repeated(
    state: TurnState, calls: list[PendingCall], log: list[EventEntry]
) -> list[PendingCall]:
    """The calls already run this turn, noted as ``tool.repeated``."""
    done = {_call_key(r["tool"], r["args"]) for r in state.get("tool_calls") or []}
    repeated = [c for c in calls if _call_key(c["name"], c["args"]) in done]
    if repeated:
        log.append(
            event(
                state,
                events.TOOL_REPEATED,
                tools=[c["name"] for c in repeated],
                args=[c["args"] for c in repeated],
            )
        )
    return repeated


def saves_only(state: TurnState) -> bool:
    """The message only asked to remember, and the save was made: the save is the answer
    (so a compared turn has nothing for two models to answer either)."""
    return bool(state.get("memory_saved")) and only_requests(state.get("query") or "")


def _saved_only(state: TurnState, services: Services) -> TurnUpdate | None:
    """A message that only asked to remember is answered by the save itself, in the
    person's words and without a model call (a small model, asked to reply to one, wrote
    "I'm sorry for any confusion..." and never said what was kept)."""
    saved = state.get("memory_saved") or []
    if state.get("tool_calls") or not saves_only(state):
        return None
    return {
        "thinking": [],
        "model": services.model_name,
        "backend": services.backend,
        "answer": confirmation(saved),
        "decision": "publish",
    }


def generate(state: TurnState, runtime: Runtime[TurnContext], config: RunnableConfig) -> TurnUpdate:
    services = runtime.context.services
    if (saved_only := _saved_only(state, services)) is not None:
        return saved_only
    repairs = state.get("repairs", 0)
    reply, use_tools, new_messages, log = _ask(state, services, config)
    thinking, written = thinking_and_answer(reply)  # written: before call markup is taken out
    # The model that answered (a replay may resume here with another one).
    update: TurnUpdate = {
        "thinking": [thinking] if thinking else [],
        "model": services.model_name,
        "backend": services.backend,
        "event_log": log,
    }
    calls, text, errors = _proposed_calls(state, services, reply, written, use_tools, log)
    if errors and not calls and repairs < 1 and services.repair_message is not None:
        schemas = {n: t.parameters for n, t in services.tools.items()}
        log.append(event(state, events.TOOL_CALL_REPAIR, errors=errors))
        repair = HumanMessage(services.repair_message(errors, schemas))
        return {
            **update,
            "messages": [*new_messages, AIMessage(written), repair],
            "repairs": repairs + 1,
            "decision": "generate",
        }
    calls = calls or _routed(state, services, use_tools, log)
    if repeated := _repeated(state, calls, log):
        calls = [c for c in calls if c not in repeated]
        if not calls:  # nothing new asked: stop the loop and answer from what is there
            return {
                **update,
                "messages": [*new_messages, *_answer_repeats(state, repeated)],
                "tools_stopped": True,
                "decision": "generate",
            }
    if calls:
        return _dispatch(update, new_messages, text, calls)
    if use_tools and _echoed_only(state, services, written):  # ask once more, tools off
        log.append(event(state, events.TOOLS_WITHHELD, reason=TEMPLATE_ECHO))
        return {
            **update,
            "messages": new_messages,
            "tools_stopped": True,
            "repairs": repairs + 1,
            "decision": "generate",
        }
    return _answered(state, services, update, new_messages, written, text, log)


def _echoed_only(state: TurnState, services: Services, written: str) -> bool:
    """The reply only copied the tool instructions, before any tool ran and with the turn's
    repair unspent: a small model does that when the question needs no tool at all ("2+2?"),
    so it is asked once more without them rather than shown that it could not answer."""
    if state.get("repairs", 0) >= 1 or state.get("tool_calls"):
        return False
    schemas = {n: t.parameters for n, t in services.tools.items()}
    return unusable_reason(without_listing_lines(written)[0], schemas) == TEMPLATE_ECHO


def _dispatch(
    update: TurnUpdate, new_messages: list[BaseMessage], text: str, calls: list[PendingCall]
) -> TurnUpdate:
    """The reply asks for ``calls``: they go to the tools."""
    ai = AIMessage(
        content=text,
        tool_calls=[
            {"name": c["name"], "args": c["args"], "id": c["id"], "type": "tool_call"}
            for c in calls
        ],
    )
    return {
        **update,
        "messages": [*new_messages, ai],
        "pending_tool_calls": calls,
        "decision": "dispatch_tool",
    }


def _answered(
    state: TurnState,
    services: Services,
    update: TurnUpdate,
    new_messages: list[BaseMessage],
    written: str,
    text: str,
    log: list[EventEntry],
) -> TurnUpdate:
    """The reply is the answer (or, when every tool failed, what failed); an empty one is
    asked for once more."""
    repairs = state.get("repairs", 0)
    failed = every_call_failed(state.get("tool_calls"))
    if failed and not services.native_tools:  # its text would be a guess: say what failed
        log.append(event(state, events.ANSWER_FALLBACK, reason=TOOLS_FAILED, chars=len(written)))
        text = honest_failure(failed)
    else:
        text = _final_answer(state, services, written, text, log)
    if not text.strip():
        if repairs < 1:
            return {
                **update,
                "messages": [*new_messages, HumanMessage(EMPTY_NUDGE)],
                "repairs": repairs + 1,
                "decision": "generate",
            }
        text = EMPTY_ANSWER
    if saved := state.get("memory_saved"):  # what was kept is said first, plainly
        text = f"{confirmation(saved)}\n\n{text}"
    # The final answer lives in `answer` (and, after publish, in the turn log); it is not
    # kept in the working messages, which hold only what the model was shown.
    return {**update, "messages": new_messages, "answer": text, "decision": "publish"}
