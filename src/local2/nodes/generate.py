"""``generate``: one chat-model call, then decide what happens next.

The reply is split into thinking and answer; tool calls are taken natively, else parsed from
text (small models), else proposed by the keyword router on the first round. A malformed
call gets one repair message. Past ``max_tool_iterations`` the model must answer without
tools from what it gathered.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from local2 import events
from local2.models.errors import ModelError, describe_ollama_error
from local2.models.thinking import thinking_and_answer
from local2.nodes.common import Services, event
from local2.prompt import build_prompt
from local2.state import TurnState

FORCED_SYNTHESIS = (
    "You have used all the tool calls allowed for this question. Do not call any more tools: "
    "answer now from what you have gathered, and say what is still uncertain."
)
EMPTY_NUDGE = "Your reply was empty. Please answer the question now."
EMPTY_ANSWER = "(The model returned an empty answer.)"


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:8]}"


def _native_calls(reply: AIMessage) -> list[dict[str, Any]]:
    return [
        {"name": c["name"], "args": dict(c.get("args") or {}), "id": c.get("id") or _call_id()}
        for c in reply.tool_calls
    ]


def call_model(
    services: Services, prompt: list, config: RunnableConfig, *, tools: bool
) -> AIMessage:
    """Invoke the chat model (with the tool schemas bound when ``tools``) and name failures."""
    model = services.chat_model
    if tools:
        model = model.bind_tools([t.schema() for t in services.tools.values()])  # type: ignore[assignment]
    try:
        reply = model.invoke(prompt, config)
    except ModelError:
        raise
    except Exception as exc:
        if services.backend == "ollama":
            raise describe_ollama_error(
                exc, host=services.settings.ollama_host, model=services.model_name
            ) from exc
        raise ModelError(f"The {services.backend or 'chat'} model failed: {exc}") from exc
    if not isinstance(reply, AIMessage):
        reply = AIMessage(content=getattr(reply, "content", str(reply)))
    return reply


def _invalid_native_args(services: Services, calls: list[dict[str, Any]]) -> list[str]:
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


def generate(state: TurnState, services: Services, config: RunnableConfig) -> dict:
    gen = services.settings.generator
    rounds = state.get("tool_rounds", 0)
    repairs = state.get("repairs", 0)
    forced = bool(services.tools) and rounds >= gen.max_tool_iterations
    use_tools = bool(services.tools) and not forced
    new_messages: list = []
    log: list = []
    if forced:
        log.append(
            event(state, events.TOOL_LOOP_LIMIT, limit=gen.max_tool_iterations, rounds=rounds)
        )
        new_messages.append(HumanMessage(FORCED_SYNTHESIS, id=f"forced-{state['query_id']}"))

    history = services.turn_log.window(state.get("history_head"), gen.max_turns)
    working = [*state.get("messages", []), *new_messages]
    prompt = build_prompt(gen.system_prompt, history, working, gen.history_token_budget)
    reply = call_model(services, prompt, config, tools=use_tools)

    thinking, text = thinking_and_answer(reply)
    written = text  # what the model wrote, before any call markup is taken out
    # The model that answered (a replay may resume here with another one).
    update: dict[str, Any] = {
        "thinking": [thinking] if thinking else [],
        "model": services.model_name,
        "backend": services.backend,
    }
    calls = _native_calls(reply) if use_tools else []
    errors = _invalid_native_args(services, calls)
    if errors:
        calls = []
    elif use_tools and not calls and gen.text_tool_calls and services.tool_parser is not None:
        parsed = services.tool_parser(text, {n: t.parameters for n, t in services.tools.items()})
        calls, text, errors = parsed.calls, parsed.text, parsed.errors

    if errors and not calls and repairs < 1 and services.repair_message is not None:
        schemas = {n: t.parameters for n, t in services.tools.items()}
        log.append(event(state, events.TOOL_CALL_REPAIR, errors=errors))
        return {
            **update,
            "messages": [
                *new_messages,
                AIMessage(written),
                HumanMessage(services.repair_message(errors, schemas)),
            ],
            "repairs": repairs + 1,
            "decision": "generate",
            "event_log": log,
        }

    if use_tools and not calls and rounds == 0 and gen.keyword_router and services.router:
        calls = services.router(state["query"], list(services.tools))
        if calls:
            log.append(event(state, events.TOOL_ROUTED, tools=[c["name"] for c in calls]))

    if calls:
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
            "event_log": log,
        }

    if not text.strip():
        if repairs < 1:
            return {
                **update,
                "messages": [*new_messages, HumanMessage(EMPTY_NUDGE)],
                "repairs": repairs + 1,
                "decision": "generate",
                "event_log": log,
            }
        text = EMPTY_ANSWER
    # The final answer lives in `answer` (and, after publish, in the turn log); it is not
    # kept in the working messages, which hold only what the model was shown.
    return {
        **update,
        "messages": new_messages,
        "answer": text,
        "decision": "publish",
        "event_log": log,
    }
