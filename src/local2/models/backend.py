"""Choose the chat backend: Ollama when it answers, the embedded demo model otherwise."""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from local2.config import Settings
from local2.models.errors import ModelError, ModelUnavailable
from local2.models.ollama import check_ollama, make_ollama_chat

EMBEDDED_NAME = "smollm2-135m-instruct"


@dataclass
class ChatBackend:
    model: BaseChatModel
    name: str
    backend: str  # "ollama" | "embedded" | "openai"
    notice: str | None = None  # shown to the person when auto fell back


def embedded_notice(settings: Settings, reason: str) -> str:
    model = settings.generator.model
    return (
        f"Using the embedded demo model ({EMBEDDED_NAME}: a tiny model with weak answers). "
        f"{reason} For a real model: start Ollama with `ollama serve` and run "
        f"`ollama pull {model}`."
    )


def make_embedded(settings: Settings) -> BaseChatModel:
    try:
        from local2.models.embedded import EmbeddedChatModel
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ModelUnavailable(
            "The embedded model needs the optional extra.",
            "Install it with: pip install 'local2[embedded]'",
        ) from exc
    return EmbeddedChatModel.from_settings(settings)


def make_chat_model(
    settings: Settings, backend: str | None = None, model: str | None = None
) -> ChatBackend:
    choice = backend or settings.generator.backend
    name = model or settings.generator.model
    if choice == "ollama":
        return ChatBackend(make_ollama_chat(settings, name), name, "ollama")
    if choice == "embedded":
        return ChatBackend(make_embedded(settings), EMBEDDED_NAME, "embedded")
    if choice == "openai":  # an OpenAI-compatible server (vLLM, llama.cpp, LM Studio)
        from local2.models.openai_compat import make_openai_chat

        return ChatBackend(make_openai_chat(settings, name), name, "openai")
    if choice != "auto":
        raise ModelError(
            f"Unknown backend '{choice}'.", "Use one of: auto, ollama, embedded, openai."
        )
    try:
        check_ollama(settings.ollama_host, name)
    except ModelUnavailable as exc:
        notice = embedded_notice(settings, exc.message)
        return ChatBackend(make_embedded(settings), EMBEDDED_NAME, "embedded", notice)
    return ChatBackend(make_ollama_chat(settings, name), name, "ollama")
