"""A scripted chat model: replies you choose, streamed; the product's own.

The product runs it itself: the offline agent (``service/opening.py: offline_parts``), which
reads and rates sessions and runs with no model server, is built on one with no replies, so
nothing it does can reach a model, and anything that asked it for an answer would fail loudly
("ran out of replies") rather than be given one. Given replies, it also stands in for a model
in notebooks, benchmarks and tests.

Each reply is an :class:`AIMessage` (content, ``tool_calls``, thinking in
``additional_kwargs["reasoning_content"]``) or a function of the messages it was sent.
It streams like ChatOllama does: thinking chunks with empty content, then content pieces,
then tool calls whole in one chunk.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

Reply = AIMessage | Callable[[list[BaseMessage]], AIMessage]


def reply(
    content: str = "",
    *,
    thinking: str = "",
    tool_calls: Sequence[dict[str, Any]] = (),  # as a model writes them: {name, args[, id]}
) -> AIMessage:
    """Build a scripted reply; ``tool_calls`` items are ``{"name", "args"[, "id"]}``."""
    calls = [
        {
            "name": c["name"],
            "args": c.get("args", {}),
            "id": c.get("id") or f"call_{i}",
            "type": "tool_call",
        }
        for i, c in enumerate(tool_calls)
    ]
    extra = {"reasoning_content": thinking} if thinking else {}
    return AIMessage(content=content, tool_calls=calls, additional_kwargs=extra)


class ScriptedChatModel(BaseChatModel):
    """Returns its replies in order (the last one repeats when ``repeat_last``); with none
    left, raises instead of answering (the offline agent's model has none)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    replies: list[Any] = Field(default_factory=list)
    repeat_last: bool = False
    chunk_size: int = 8
    model: str = "scripted"
    _index: int = PrivateAttr(default=0)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    # what bind_tools was given: OpenAI function schemas (JSON schema documents) or tools
    bound_tools: list[list[dict[str, Any]]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self.bound_tools.append(list(tools))
        return self.bind(tools=list(tools), **kwargs)

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        with self._lock:
            self.seen.append(list(messages))
            if self._index >= len(self.replies):
                if self.repeat_last and self.replies:
                    item = self.replies[-1]
                else:
                    raise RuntimeError("ScriptedChatModel ran out of replies")
            else:
                item = self.replies[self._index]
                self._index += 1
        message: AIMessage = item(messages) if callable(item) else item
        return message

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._next(messages)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        message = self._next(messages)
        thinking = str(message.additional_kwargs.get("reasoning_content") or "")
        pieces: list[AIMessageChunk] = []
        for i in range(0, len(thinking), self.chunk_size):
            pieces.append(
                AIMessageChunk(
                    content="",
                    additional_kwargs={"reasoning_content": thinking[i : i + self.chunk_size]},
                )
            )
        content = str(message.content)
        for i in range(0, len(content), self.chunk_size):
            pieces.append(AIMessageChunk(content=content[i : i + self.chunk_size]))
        if message.tool_calls:
            pieces.append(
                AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        {
                            "name": c["name"],
                            "args": json.dumps(c["args"]),
                            "id": c["id"],
                            "index": i,
                            "type": "tool_call_chunk",
                        }
                        for i, c in enumerate(message.tool_calls)
                    ],
                )
            )
        if not pieces:
            pieces.append(AIMessageChunk(content=""))
        for piece in pieces:
            chunk = ChatGenerationChunk(message=piece)
            if run_manager is not None:
                run_manager.on_llm_new_token(str(piece.content), chunk=chunk)
            yield chunk
