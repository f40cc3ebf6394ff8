"""The ``openai`` backend: any OpenAI-compatible server (vLLM, llama.cpp's server, LM Studio)
through langchain-openai, for models on GPU hosts.

``ChatOpenAI`` follows OpenAI's own schema and drops the reasoning such servers send beside
the answer (``reasoning_content`` from vLLM, DeepSeek and llama.cpp; ``reasoning`` from
newer vLLM and Ollama's ``/v1``). The subclass here keeps it in
``additional_kwargs["reasoning_content"]``, where LoCAL2 reads thinking from every backend,
so it never lands in the answer or the history. Inline ``<think>`` tags are split off later
as for any model. The API key comes from the environment only and never appears in errors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import openai
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI

from local2.config import Settings
from local2.errors import ModelError, ModelUnavailable

REASONING_FIELDS = ("reasoning_content", "reasoning")
NO_KEY = "no-key"  # local servers take any key; the client insists on one


def reasoning_of(message: Mapping[str, Any] | None) -> str:
    """The reasoning text a server put beside the answer, if any."""
    for name in REASONING_FIELDS:
        value = (message or {}).get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def describe_openai_error(
    exc: openai.OpenAIError, *, base_url: str, model: str, key_env: str
) -> ModelError:
    """What went wrong with the server, and the fix."""
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(
            f"The model server at {base_url} did not answer in time.",
            "Check the server's load, or raise generator.request_timeout_s.",
        )
    if isinstance(exc, openai.APIConnectionError):
        return ModelUnavailable(
            f"Cannot reach the OpenAI-compatible server at {base_url}.",
            "Start it (for example `vllm serve MODEL`) or fix generator.openai.base_url.",
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return ModelUnavailable(
            f"The model server at {base_url} refused the API key.",
            f"Set {key_env} to a key the server accepts.",
        )
    if isinstance(exc, openai.NotFoundError):
        return ModelUnavailable(
            f"Model '{model}' is not served at {base_url}.",
            f"Set generator.model to one listed by GET {base_url.rstrip('/')}/models.",
        )
    if isinstance(exc, openai.APIStatusError):
        return ModelError(
            f"The model server at {base_url} answered {exc.status_code}: {exc.message}"
        )
    return ModelError(f"The model call failed: {type(exc).__name__}: {exc}")


class CompatibleChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` that keeps third-party reasoning apart and names failures."""

    key_env: str = "OPENAI_API_KEY"

    def invoke(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().invoke(*args, **kwargs)
        except openai.OpenAIError as exc:
            raise describe_openai_error(
                exc, base_url=str(self.openai_api_base), model=self.model_name, key_env=self.key_env
            ) from exc

    def _create_chat_result(
        self,
        response: Any,
        generation_info: dict[str, Any] | None = None,  # LangChain's interface
    ) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)
        raw = response if isinstance(response, dict) else response.model_dump()
        for generation, choice in zip(result.generations, raw.get("choices") or [], strict=False):
            reasoning = reasoning_of(choice.get("message"))
            if reasoning:
                generation.message.additional_kwargs["reasoning_content"] = reasoning
        return result

    def _convert_chunk_to_generation_chunk(
        self,
        chunk: dict[str, Any],  # a streamed chunk as the server sent it (JSON)
        default_chunk_class: type,
        base_generation_info: dict[str, Any] | None,  # LangChain's
    ) -> ChatGenerationChunk | None:
        generation = super()._convert_chunk_to_generation_chunk(
            chunk, default_chunk_class, base_generation_info
        )
        choices = chunk.get("choices") or (chunk.get("chunk") or {}).get("choices") or []
        if generation is not None and choices:
            reasoning = reasoning_of(choices[0].get("delta"))
            if reasoning:
                generation.message.additional_kwargs["reasoning_content"] = reasoning
        return generation


def make_openai_chat(settings: Settings, model: str | None = None) -> CompatibleChatOpenAI:
    gen = settings.generator
    key_env = gen.openai.api_key_env
    return CompatibleChatOpenAI(
        model=model or gen.model,
        base_url=gen.openai.base_url,
        api_key=os.environ.get(key_env) or NO_KEY,
        key_env=key_env,
        temperature=gen.temperature,
        timeout=gen.request_timeout_s,
        max_retries=1,
        stream_usage=True,
    )
