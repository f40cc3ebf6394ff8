"""How the Ollama client's failures become a :class:`~local2.errors.ModelError` naming the fix."""

from __future__ import annotations

import httpx

from local2.errors import ModelError, ModelNotPulled, ModelUnavailable


def describe_ollama_error(exc: BaseException, *, host: str, model: str) -> ModelError:
    """Turn whatever the Ollama client raised into a :class:`ModelError` with its fix."""

    try:
        # ollama: 247 modules at import; an error from it means it is loaded already
        from ollama import ResponseError
    except ImportError:  # pragma: no cover - ollama is a dependency
        ResponseError = ()  # type: ignore[assignment,misc]  # no class to catch without ollama

    text = str(exc)
    if isinstance(exc, ResponseError):
        status = getattr(exc, "status_code", None)
        if status == 404 or "not found" in text.lower():
            return ModelNotPulled(
                f"Model '{model}' is not available on the Ollama server at {host}.",
                f"Pull it with: ollama pull {model}",
            )
        for capability in ("tools", "thinking"):
            if f"does not support {capability}" in text:
                return ModelError(
                    f"Model '{model}' at {host} does not support {capability}.",
                    "Run `local2 doctor` to see what each installed model can do, and pick "
                    "another with --model.",
                )
        return ModelError(f"Ollama at {host} answered with an error ({status}): {exc.error}.")
    if isinstance(exc, httpx.TimeoutException):
        return ModelError(
            f"Ollama at {host} did not answer in time.",
            "Check the server's load, or raise generator.request_timeout_s.",
        )
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)) or (
        "incomplete" in text.lower() or "peer closed" in text.lower()
    ):
        return ModelError(
            f"The stream from Ollama at {host} broke mid-answer; nothing was recorded.",
            "Ask again; if it keeps happening, check the Ollama server's log.",
        )
    if isinstance(exc, (ConnectionError, httpx.ConnectError, httpx.NetworkError)) or (
        "failed to connect" in text.lower()
    ):
        return ModelUnavailable(
            f"Cannot reach Ollama at {host}.",
            "Start it with: ollama serve (or set OLLAMA_HOST to where it runs).",
        )
    return ModelError(f"The model call failed: {type(exc).__name__}: {text}")
