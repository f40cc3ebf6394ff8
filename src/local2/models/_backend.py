"""Choose the chat backend for a model name; each backend is one builder in :data:`BUILDERS`.

``ollama`` never replaces the chosen model: when Ollama answers without it, the person is
told to pull it and shown what is installed. ``auto`` uses Ollama the same way and falls
back to the embedded demo model only when Ollama itself does not answer, with a notice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from local2.config import Settings
from local2.errors import ModelError, ModelNotPulled, ModelUnavailable
from local2.models._ollama import make_ollama_chat

# langchain-ollama (about a second to import) is imported only when Ollama is used.

EMBEDDED_NAME = "smollm2-135m-instruct"


@dataclass
class ChatBackend:
    model: BaseChatModel
    name: str
    backend: str  # "ollama" | "embedded" | "openai"
    notice: str | None = None  # shown to the person when auto fell back
    # False: the model cannot call tools natively, so tools are described in its prompt,
    # calls are read from its text and the keyword router is the last fallback
    # (docs/architecture.md, "A turn's path").
    native_tools: bool = True


def embedded_notice(settings: Settings, reason: str) -> str:
    model = settings.generator.model
    return (
        f"Using the embedded demo model ({EMBEDDED_NAME}: a tiny model with weak answers). "
        f"{reason} For a real model: start Ollama with `ollama serve` and run "
        f"`ollama pull {model}`."
    )


def make_embedded(settings: Settings) -> BaseChatModel:
    try:
        # llama-cpp-python and the embedded model: 739 modules at import, only when used
        from local2.models._embedded import EmbeddedChatModel
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ModelUnavailable(
            "The embedded model needs the optional extra.",
            "Install it with: pip install 'local2[embedded]'",
        ) from exc
    return EmbeddedChatModel.from_settings(settings)


def embedded_backend(settings: Settings, name: str) -> ChatBackend:
    return ChatBackend(make_embedded(settings), EMBEDDED_NAME, "embedded", native_tools=False)


def ollama_backend(settings: Settings, name: str) -> ChatBackend:
    """The named Ollama model. Pulled or not is checked now; a server that is down is
    reported by the first question (so the app can start before Ollama does)."""
    # _ollama_catalog brings httpx's client, 177 modules at import: only when Ollama is the backend
    from local2.models._ollama_catalog import require_model

    info = None
    try:
        info = require_model(settings.ollama_host, name)
    except ModelNotPulled:
        raise
    except ModelUnavailable:
        pass  # down for now: the first question says how to start it
    native = info is None or info.can("tools") is not False
    return ChatBackend(make_ollama_chat(settings, name, info), name, "ollama", native_tools=native)


def auto_backend(settings: Settings, name: str) -> ChatBackend:
    """Ollama when it answers (a missing model is an error, not a reason to switch), else
    the embedded model with a notice."""
    # _ollama_catalog brings httpx's client, 177 modules at import: only when Ollama is the backend
    from local2.models._ollama_catalog import ollama_models

    try:
        ollama_models(settings.ollama_host)
    except ModelUnavailable as exc:
        fallback = embedded_backend(settings, name)
        fallback.notice = embedded_notice(settings, exc.message)
        return fallback
    return ollama_backend(settings, name)


def openai_backend(settings: Settings, name: str) -> ChatBackend:
    """An OpenAI-compatible server (vLLM, llama.cpp's server, LM Studio) on a GPU host."""
    # langchain-openai: 1,420 modules at import, only for an OpenAI-compatible server
    from local2.models._openai_compat import make_openai_chat

    return ChatBackend(make_openai_chat(settings, name), name, "openai")


BUILDERS: dict[str, Callable[[Settings, str], ChatBackend]] = {
    "auto": auto_backend,
    "ollama": ollama_backend,
    "embedded": embedded_backend,
    "openai": openai_backend,
}


def make_chat_model(
    settings: Settings, backend: str | None = None, model: str | None = None
) -> ChatBackend:
    choice = backend or settings.generator.backend
    build = BUILDERS.get(choice)
    if build is None:
        raise ModelError(f"Unknown backend '{choice}'.", f"Use one of: {', '.join(BUILDERS)}.")
    return build(settings, model or settings.generator.model)
