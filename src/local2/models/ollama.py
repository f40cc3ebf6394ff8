"""The ``ollama`` backend: LangChain's ChatOllama, configured for thinking and long context."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from local2.config import Settings
from local2.models.errors import ModelUnavailable, describe_ollama_error

if TYPE_CHECKING:  # imported when an Ollama model is made: it takes about a second
    from langchain_ollama import ChatOllama


def make_ollama_chat(settings: Settings, model: str | None = None) -> ChatOllama:
    from langchain_ollama import ChatOllama

    gen = settings.generator
    return ChatOllama(
        model=model or gen.model,
        base_url=settings.ollama_host,
        num_ctx=gen.num_ctx,
        keep_alive=gen.keep_alive,
        reasoning=gen.reasoning,
        temperature=gen.temperature,
        client_kwargs={"timeout": gen.request_timeout_s},
    )


def ollama_models(host: str, timeout_s: float = 2.0) -> list[str]:
    """Names of the models pulled on the server; raises :class:`ModelUnavailable` if down."""
    try:
        response = httpx.get(f"{host.rstrip('/')}/api/tags", timeout=timeout_s)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise describe_ollama_error(exc, host=host, model="") from exc
    return [m.get("name") or m.get("model", "") for m in response.json().get("models", [])]


def has_model(available: list[str], model: str) -> bool:
    """Ollama names ``llama3`` and ``llama3:latest`` the same model."""
    wanted = model if ":" in model else f"{model}:latest"
    return any(name in (model, wanted) for name in available)


def check_ollama(host: str, model: str, timeout_s: float = 2.0) -> None:
    """Raise :class:`ModelUnavailable` with the fix unless ``model`` is ready at ``host``."""
    if not has_model(ollama_models(host, timeout_s), model):
        raise ModelUnavailable(
            f"Model '{model}' is not available on the Ollama server at {host}.",
            f"Pull it with: ollama pull {model}",
        )
