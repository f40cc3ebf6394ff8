"""What an Ollama server has: its models (``/api/tags``) and what each can do (``/api/show``).

Capabilities decide how LoCAL2 talks to a model: ``tools`` means it is offered tools natively
(the model decides); without it, tools are described in the prompt and calls are read from
text, with the keyword router as the last fallback. ``thinking`` decides whether ``think`` is
requested (Ollama answers 400 to ``think: true`` for a model without it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from local2.errors import ModelNotPulled, ModelUnavailable
from local2.models._ollama_failures import describe_ollama_error
from local2.ports import tls_context


@dataclass(frozen=True)
class ModelInfo:
    """One pulled model. ``capabilities`` is None when the server does not report them."""

    name: str
    capabilities: tuple[str, ...] | None = None
    context_length: int | None = None
    parameter_size: str = ""

    def can(self, capability: str) -> bool | None:
        """True/False from ``/api/show``, None when unknown (older Ollama)."""
        return None if self.capabilities is None else capability in self.capabilities

    @property
    def embedding_only(self) -> bool:
        caps = self.capabilities or ()
        return "embedding" in caps and "completion" not in caps

    def summary(self) -> str:
        """``tools, thinking · 131k context · 12B`` (what a person picks a model by)."""
        if self.capabilities is None:
            caps = "capabilities unknown"
        else:
            shown = [c for c in self.capabilities if c != "completion"]
            caps = ", ".join(shown) if shown else "text only"
            if "tools" not in self.capabilities and not self.embedding_only:
                caps += " (no tool calling)"
        parts = [caps]
        if self.context_length:
            parts.append(f"{round(self.context_length / 1000)}k context")
        if self.parameter_size:
            parts.append(self.parameter_size)
        return " · ".join(parts)


def canonical(name: str) -> str:
    """Ollama names ``llama3`` and ``llama3:latest`` the same model."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def has_model(available: Iterable[str], model: str) -> bool:
    wanted = canonical(model)
    return any(canonical(name) == wanted for name in available)


def _get(
    host: str, path: str, timeout_s: float, body: dict[str, str] | None = None
) -> httpx.Response:
    url = f"{host.rstrip('/')}{path}"
    try:
        if body is None:
            return httpx.get(url, timeout=timeout_s, trust_env=False, verify=tls_context(False))
        return httpx.post(
            url, json=body, timeout=timeout_s, trust_env=False, verify=tls_context(False)
        )
    except httpx.TimeoutException as exc:  # not answering counts as not there
        raise ModelUnavailable(
            f"Ollama at {host} did not answer within {timeout_s:g}s.",
            "Start it with: ollama serve (or set OLLAMA_HOST to where it runs).",
        ) from exc
    except httpx.HTTPError as exc:
        raise describe_ollama_error(exc, host=host, model="") from exc


def ollama_models(host: str, timeout_s: float = 2.0) -> list[str]:
    """Names of the pulled models; raises :class:`ModelUnavailable` when Ollama does not answer."""
    response = _get(host, "/api/tags", timeout_s)
    if response.status_code != 200:
        raise ModelUnavailable(
            f"The server at {host} does not answer like Ollama ({response.status_code}).",
            "Check OLLAMA_HOST, or start Ollama with: ollama serve",
        )
    try:
        models = response.json().get("models") or []
    except (ValueError, AttributeError):
        raise ModelUnavailable(
            f"The server at {host} does not answer like Ollama.",
            "Check OLLAMA_HOST, or start Ollama with: ollama serve",
        ) from None
    return [str(m.get("name") or m.get("model") or "") for m in models]


def _context_length(model_info: Any) -> int | None:
    if not isinstance(model_info, dict):
        return None
    for key, value in model_info.items():
        if key.endswith(".context_length") and isinstance(value, int):
            return value
    return None


def parse_show(name: str, data: dict[str, Any]) -> ModelInfo:  # Ollama's JSON, unchecked
    """A :class:`ModelInfo` from an ``/api/show`` response body."""
    caps = data.get("capabilities")
    details = data.get("details") or {}
    return ModelInfo(
        name=name,
        capabilities=tuple(str(c) for c in caps) if isinstance(caps, list) else None,
        context_length=_context_length(data.get("model_info")),
        parameter_size=str(details.get("parameter_size") or ""),
    )


def show_model(host: str, name: str, timeout_s: float = 5.0) -> ModelInfo | None:
    """What one model can do, or None when it is not pulled."""
    response = _get(host, "/api/show", timeout_s, {"model": name})
    if response.status_code == 404:
        return None
    try:
        data = response.json() if response.status_code == 200 else None
    except ValueError:
        data = None
    return parse_show(name, data) if isinstance(data, dict) else ModelInfo(name)


def list_models(host: str, timeout_s: float = 2.0) -> list[ModelInfo]:
    """Every pulled model with its capabilities; raises :class:`ModelUnavailable` if down."""
    infos = []
    for name in ollama_models(host, timeout_s):
        info = show_model(host, name, max(timeout_s, 5.0))
        infos.append(info or ModelInfo(name))
    return infos


def chat_models(models: Sequence[ModelInfo]) -> list[ModelInfo]:
    """The models that can answer a chat (embedding-only models left out)."""
    return [m for m in models if not m.embedding_only]


def not_pulled(model: str, host: str, installed: Sequence[str]) -> ModelNotPulled:
    """The error for a chosen model that Ollama does not have: the pull line and what is there."""
    have = ", ".join(installed) if installed else "none"
    return ModelNotPulled(
        f"Model '{model}' is not pulled on the Ollama server at {host} (installed: {have}).",
        f"Pull it with: ollama pull {model}   (or choose an installed one with --model)",
    )


def require_model(host: str, model: str, timeout_s: float = 2.0) -> ModelInfo:
    """The chosen model's info; :class:`ModelUnavailable` when Ollama is down or lacks it."""
    available = ollama_models(host, timeout_s)
    if not has_model(available, model):
        raise not_pulled(model, host, available)
    return show_model(host, model, max(timeout_s, 5.0)) or ModelInfo(model)
