"""The ``ollama`` backend: LangChain's ChatOllama, configured for thinking and long context."""

from __future__ import annotations

from typing import TYPE_CHECKING

from local2.config import Settings
from local2.ports import tls_context

if TYPE_CHECKING:  # imported when an Ollama model is made: it takes about a second
    from langchain_ollama import ChatOllama

    from local2.models._ollama_catalog import ModelInfo


def make_ollama_chat(
    settings: Settings, model: str | None = None, info: ModelInfo | None = None
) -> ChatOllama:
    """ChatOllama for ``model``; ``info`` (from ``/api/show``) turns thinking off for a model
    without it, since Ollama refuses ``think: true`` there."""
    # langchain_ollama with the ollama client: 247 modules at import, only when Ollama answers
    from langchain_ollama import ChatOllama

    gen = settings.generator
    reasoning = gen.reasoning
    if info is not None and info.can("thinking") is False:
        reasoning = None
    return ChatOllama(
        model=model or gen.model,
        base_url=settings.ollama_host,
        num_ctx=gen.num_ctx,
        keep_alive=gen.keep_alive,
        reasoning=reasoning,
        temperature=gen.temperature,
        client_kwargs={"timeout": gen.request_timeout_s, "verify": tls_context()},
    )
