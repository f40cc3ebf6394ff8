"""Tools for a model that cannot call them natively: described in its prompt, called in text.

The embedded demo model and Ollama models whose capabilities lack ``tools`` get the tool list
in their system prompt and are asked to write ``<tool_call>{json}</tool_call>``; the graph's
text parser reads the calls. Their earlier calls are shown back in that same written form
and tool results as user turns, since such models were not trained on a ``tool`` role
(Ollama's templates for them drop it).

The wording lives here once, so the answer guard can recognise a model that echoes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

TOOLS_HEADER = "You can use these tools:"
CALL_TEMPLATE = (
    '<tool_call>{"name": "<tool name>", "arguments": {"<argument>": "<value>"}}</tool_call>'
)
CALL_INSTRUCTION = "To use a tool, reply with only this and nothing else:"
ANSWER_INSTRUCTION = "Otherwise answer the user directly."
RESULT_PREFIX = "Result of {name}:"


def message_text(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    parts = [p if isinstance(p, str) else p.get("text", "") for p in content]
    return "\n".join(p for p in parts if p)


# tools: OpenAI function schemas (JSON schema documents), as LangChain binds them
def describe_tools(tools: Sequence[dict[str, Any]]) -> str:
    """A compact tool list and the exact call format, sized for a small model's attention."""
    lines = [TOOLS_HEADER]
    for tool in tools:
        function = tool.get("function", tool)
        props = (function.get("parameters") or {}).get("properties") or {}
        args = ", ".join(f"{name}: {spec.get('type', 'any')}" for name, spec in props.items())
        description = (function.get("description") or "").strip().splitlines()
        lines.append(f"- {function['name']}({args}): {description[0] if description else ''}")
    lines.append(f"{CALL_INSTRUCTION}\n{CALL_TEMPLATE}\n{ANSWER_INSTRUCTION}")
    return "\n".join(lines)


def written_call(name: str, args: dict[str, Any]) -> str:  # args as the model wrote them
    return f"<tool_call>{json.dumps({'name': name, 'arguments': args})}</tool_call>"


def prompted_messages(
    messages: Sequence[BaseMessage],
    tools: Sequence[dict[str, Any]] | None = None,  # OpenAI function schemas (JSON schema)
) -> list[BaseMessage]:
    """``messages`` for a model without native tools: one leading system turn (plus the tool
    list when ``tools``), earlier calls as written calls, tool results as user turns."""
    system = [message_text(m.content) for m in messages if isinstance(m, SystemMessage)]
    if tools:
        system.append(describe_tools(tools))
    text = "\n\n".join(s for s in system if s)
    out: list[BaseMessage] = [SystemMessage(text)] if text else []
    call_names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, AIMessage):
            written = message_text(message.content)
            for call in message.tool_calls:
                call_names[call.get("id") or ""] = call["name"]
                written += written_call(call["name"], call["args"])
            out.append(AIMessage(written))
        elif isinstance(message, ToolMessage):
            name = message.name or call_names.get(message.tool_call_id, "tool")
            result = message_text(message.content)
            out.append(HumanMessage(f"{RESULT_PREFIX.format(name=name)}\n{result}"))
        else:
            out.append(message)
    return out
