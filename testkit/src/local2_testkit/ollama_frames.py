"""The replies of the Ollama-protocol test server as frames: Ollama's NDJSON lines (thinking
in its field or inline, whole tool calls in one chunk, the final counts) and the OpenAI
protocol's message parts, from one brain's :class:`~local2_testkit.brains.Reply`."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from local2_testkit.brains import Reply, ThinkMode, call_parts, message_text
from local2_testkit.ollama_records import now, pieces


def ollama_frames(
    path: str,
    model: str,
    request: dict[str, Any],  # an Ollama request body, as a client sent it (JSON)
    reply: Reply,
    mode: ThinkMode,
    words_per_chunk: int,
) -> list[dict[str, Any]]:  # Ollama's wire JSON
    """The reply as Ollama streams it for ``path`` (``/api/chat`` or ``/api/generate``)."""
    think = request.get("think")
    content, thinking = reply.content, ""
    if reply.thinking and mode != "none":
        if mode == "inline" or think is None:  # unset think: the model's default, inline
            content = f"<think>\n{reply.thinking}\n</think>\n\n{content}"
        elif think is not False:
            thinking = reply.thinking
    chat = path == "/api/chat"

    # Ollama's wire JSON
    def frame(text: str = "", thought: str = "", calls: list[Any] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"model": model, "created_at": now()}  # Ollama's wire JSON
        if chat:
            message: dict[str, Any] = {"role": "assistant", "content": text}  # Ollama's wire JSON
            if thought:
                message["thinking"] = thought
            if calls:
                message["tool_calls"] = calls
            out["message"] = message
        else:
            out["response"] = text
            if thought:
                out["thinking"] = thought
        out["done"] = False
        return out

    frames = [frame(thought=p) for p in pieces(thinking, words_per_chunk)]
    frames += [frame(text=p) for p in pieces(content, words_per_chunk)]
    if reply.tool_calls and chat:
        calls = []
        for i, call in enumerate(reply.tool_calls):
            name, args = call_parts(call)
            calls.append(
                {"id": f"call_{i}", "function": {"index": i, "name": name, "arguments": args}}
            )
        frames.append(frame(calls=calls))
    prompt_words = sum(len(message_text(m).split()) for m in request.get("messages") or [])
    final = frame()
    final.update(
        done=True,
        done_reason=reply.done_reason,
        total_duration=5_000_000,
        load_duration=1_000_000,
        prompt_eval_count=prompt_words,
        prompt_eval_duration=1_000_000,
        eval_count=max(1, len(frames)),
        eval_duration=3_000_000,
    )
    return [*frames, final]


def merge_frames(frames: list[dict[str, Any]]) -> dict[str, Any]:  # Ollama's wire JSON
    """The non-streaming response: all pieces joined into the final frame."""
    final = dict(frames[-1])
    if "message" in final:
        message: dict[str, Any] = {"role": "assistant", "content": ""}  # Ollama's wire JSON
        for f in frames:
            part = f["message"]
            message["content"] += part.get("content", "")
            if part.get("thinking"):
                message["thinking"] = message.get("thinking", "") + part["thinking"]
            if part.get("tool_calls"):
                message["tool_calls"] = part["tool_calls"]
        final["message"] = message
    else:
        final["response"] = "".join(f.get("response", "") for f in frames)
        thinking = "".join(f.get("thinking", "") for f in frames)
        if thinking:
            final["thinking"] = thinking
    return final


# an /api/generate body in, an /api/chat one out (JSON)
def as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """An ``/api/generate`` body seen as a chat request, so one brain serves both."""
    messages = []
    if body.get("system"):
        messages.append({"role": "system", "content": str(body["system"])})
    messages.append({"role": "user", "content": str(body.get("prompt") or "")})
    return {**body, "messages": messages}


# OpenAI's request JSON in, Ollama's out
def openai_as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI request seen as an Ollama chat request, so one brain serves both."""
    messages = []
    for message in body.get("messages") or []:
        content = message.get("content") or ""
        if isinstance(content, list):  # content parts: keep the text ones
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        messages.append({**message, "content": content})
    return {**body, "messages": messages, "think": True}


# tool calls in OpenAI's JSON
def openai_parts(reply: Reply, mode: ThinkMode) -> tuple[str, str, list[dict[str, Any]]]:
    """The reply as OpenAI sends it: its content (thinking inline when the mode says),
    its separate reasoning, and its tool calls."""
    content, thinking = reply.content, ""
    if reply.thinking and mode == "inline":
        content = f"<think>\n{reply.thinking}\n</think>\n\n{content}"
    elif reply.thinking and mode != "none":
        thinking = reply.thinking
    calls = []
    for i, call in enumerate(reply.tool_calls):
        tool, args = call_parts(call)
        calls.append(
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(args)},
            }
        )
    return content, thinking, calls


def format_problem(schema: Any, content: str) -> str | None:
    """Why a reply breaks the requested ``format`` (a schema, or ``"json"``); None: it keeps
    it (real Ollama constrains decoding to it; a brain may break it on purpose)."""
    if not schema:
        return None
    try:
        document = json.loads(content)
    except json.JSONDecodeError as exc:
        return f"not JSON: {exc.msg}"
    if isinstance(schema, dict):
        import jsonschema

        problem = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(schema).iter_errors(document)
        )
        if problem is not None:
            return str(problem.message[:200])
    return None


@dataclass(frozen=True)
class OpenAICompletion:
    """A reply in the OpenAI chat-completions protocol: one JSON answer, or the server-sent
    chunks of a streamed one (reasoning in ``field``, as vLLM or LM Studio name it)."""

    id: str
    model: str
    field: str
    words_per_chunk: int

    def answer(
        self,
        body: dict[str, Any],  # the OpenAI request's JSON, as the client sent it
        request: dict[str, Any],  # the same, as an Ollama chat request (JSON)
        reply: Reply,
        mode: ThinkMode,
    ) -> dict[str, Any] | list[dict[str, Any]]:  # OpenAI's wire JSON: a completion or its chunks
        """The whole completion, or its chunks when the request streams."""
        content, thinking, calls = openai_parts(reply, mode)
        finish = "tool_calls" if calls else ("length" if reply.done_reason == "length" else "stop")
        words = sum(len(message_text(m).split()) for m in request["messages"])
        usage = {
            "prompt_tokens": words,
            "completion_tokens": len(content.split()) + 1,
            "total_tokens": words + len(content.split()) + 1,
        }
        base = {"id": self.id, "created": int(time.time()), "model": self.model}
        field = self.field
        if body.get("stream") is not True:
            # Ollama's wire JSON
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if thinking:
                message[field] = thinking
            if calls:
                message["tool_calls"] = calls
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return {**base, "object": "chat.completion", "choices": [choice], "usage": usage}

        # OpenAI's wire JSON
        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            return {**base, "object": "chat.completion.chunk", "choices": [choice]}

        frames = [chunk({"role": "assistant", "content": ""})]
        frames += [chunk({field: p}) for p in pieces(thinking, self.words_per_chunk)]
        frames += [chunk({"content": p}) for p in pieces(content, self.words_per_chunk)]
        if calls:
            frames.append(chunk({"tool_calls": [{"index": i, **c} for i, c in enumerate(calls)]}))
        frames.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            frames.append(
                {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}
            )
        return frames
