"""The exact messages the model sees: system prompt, a trimmed window of history, this turn.

Kept in one place so the app can show the person precisely what the model was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    message_to_dict,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately

from local2.storage import Turn


def history_messages(turns: Sequence[Turn]) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for turn in turns:
        messages.append(HumanMessage(turn.user))
        messages.append(AIMessage(turn.assistant))
    return messages


def build_prompt(
    system_prompt: str,
    history: Sequence[Turn],
    working: Sequence[BaseMessage],
    token_budget: int,
) -> list[BaseMessage]:
    """System prompt + as much recent history as fits ``token_budget`` + this turn's messages."""
    past = history_messages(history)
    if past:
        past = trim_messages(
            past,
            max_tokens=token_budget,
            token_counter=count_tokens_approximately,
            strategy="last",
            start_on="human",
            allow_partial=False,
        )
    head: list[BaseMessage] = [SystemMessage(system_prompt)] if system_prompt else []
    return [*head, *past, *working]


# LangChain's message dicts (message_to_dict), trimmed, as JSON for a person to read
def prompt_as_json(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """The messages array as plain dicts (role, content, tool calls), thinking removed."""
    out = []
    for message in messages:
        data = message_to_dict(message)["data"]
        item = {"role": message.type, "content": data.get("content", "")}
        if data.get("tool_calls"):
            item["tool_calls"] = [
                {"name": c["name"], "args": c["args"], "id": c.get("id")}
                for c in data["tool_calls"]
            ]
        if data.get("tool_call_id"):
            item["tool_call_id"] = data["tool_call_id"]
            item["name"] = data.get("name")
        out.append(item)
    return out
