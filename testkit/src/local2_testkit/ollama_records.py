"""What the Ollama-protocol test server knows and records: its pulled models (and what
``/api/tags`` and ``/api/show`` say of them), the requests it received and answered, and the
hashed embeddings it serves."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import Message
from typing import Any

OLLAMA_VERSION = "0.12.6"

EMBED_DIM = 64

CHAT_CAPABILITIES = ("completion", "tools", "thinking")


@dataclass(frozen=True)
class FakeModel:
    """A pulled model and what ``/api/show`` says about it (None: the defaults for its kind)."""

    name: str
    capabilities: tuple[str, ...] | None = None
    context_length: int | None = None
    parameter_size: str | None = None

    @property
    def embedding(self) -> bool:
        return is_embedding_model(self.name)

    def caps(self) -> tuple[str, ...]:
        if self.capabilities is not None:
            return tuple(self.capabilities)
        return ("embedding",) if self.embedding else CHAT_CAPABILITIES

    def context(self) -> int:
        return self.context_length or (2048 if self.embedding else 40960)

    def size(self) -> str:
        return self.parameter_size or ("137M" if self.embedding else "4.0B")


DEFAULT_MODELS: tuple[str | FakeModel, ...] = (
    FakeModel("gemma4:12b", CHAT_CAPABILITIES, 131072, "12B"),
    "qwen3:4b",
    "nomic-embed-text",
)


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    method: str
    path: str
    body: dict[str, Any]  # the request's body, as the client sent it (JSON)


@dataclass(frozen=True)
class Served:
    """One request the server answered, with when it arrived (its request line read) and when
    the reply ended (``time.perf_counter()``): what the model took, for measuring the time
    around it. The server's own parsing of the request counts as the model's, as a real
    Ollama's would."""

    path: str
    body: dict[str, Any]  # the request's body, as the client sent it (JSON)
    started: float
    ended: float
    closed_by_client: bool = False  # the client went away before the reply ended


def hash_embedding(text: str, dim: int = EMBED_DIM) -> list[float]:
    """A deterministic, L2-normalised signed bag-of-words vector.

    Texts sharing words get a positive cosine similarity, unrelated texts land near zero, so
    ranking and threshold logic can be tested without an embedding model.
    """
    vec = [0.0] * dim
    for token in re.findall(r"\w+", text.lower()) or ["<empty>"]:
        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    if not any(vec):  # the signs cancelled out exactly: still return a unit vector
        vec[0] = 1.0
    return unit(vec)


def unit(vec: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def pieces(text: str, words_per_chunk: int) -> list[str]:
    """Split text into token-ish pieces that concatenate back to exactly ``text``."""
    if not text:
        return []
    words = re.findall(r"\s*\S+\s*", text) or [text]
    if "".join(words) != text:  # whitespace-only text
        return [text]
    size = max(1, words_per_chunk)
    return ["".join(words[i : i + size]) for i in range(0, len(words), size)]


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def canonical(model: str) -> str:
    """Ollama's name normalisation: ``name`` means ``name:latest``."""
    return model if ":" in model.rsplit("/", 1)[-1] else f"{model}:latest"


def is_embedding_model(model: str) -> bool:
    return "embed" in model or "minilm" in model


# the answer, in Ollama's (or OpenAI's) JSON
def tag_payload(model: str, spec: FakeModel) -> dict[str, Any]:
    """The model as ``/api/tags`` lists it."""
    family = re.split(r"[:\-]", model, maxsplit=1)[0]
    return {
        "name": canonical(model),
        "model": canonical(model),
        "modified_at": "2025-01-01T00:00:00Z",
        "size": 2_500_000_000 if not is_embedding_model(model) else 274_000_000,
        "digest": hashlib.sha256(model.encode()).hexdigest(),
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": family,
            "families": [family],
            "parameter_size": spec.size(),
            "quantization_level": "F16" if is_embedding_model(model) else "Q4_K_M",
        },
    }


# the answer, in Ollama's (or OpenAI's) JSON
def show_payload(model: str, spec: FakeModel, embed_dim: int) -> dict[str, Any]:
    """What ``/api/show`` says of a pulled model."""
    tag = tag_payload(model, spec)
    family = tag["details"]["family"]
    return {
        "license": "",
        "modelfile": f"FROM {model}\n",
        "parameters": "temperature 0.6",
        "template": "{{ .Prompt }}",
        "details": tag["details"],
        "model_info": {
            "general.architecture": family,
            f"{family}.context_length": spec.context(),
            f"{family}.embedding_length": embed_dim if spec.embedding else 2560,
        },
        "capabilities": list(spec.caps()),
        "modified_at": tag["modified_at"],
    }


# the request's body, as the client sent it (JSON)
def embed_payload(path: str, body: dict[str, Any], embed_dim: int) -> dict[str, Any]:
    """The answer of ``/api/embed`` (or the legacy single-prompt ``/api/embeddings``)."""
    if path == "/api/embeddings":
        return {"embedding": hash_embedding(str(body.get("prompt") or ""), embed_dim)}
    inputs = body.get("input", "")
    texts = [inputs] if isinstance(inputs, str) else [str(t) for t in inputs]
    dim = int(body.get("dimensions") or embed_dim)
    return {
        "model": str(body.get("model") or ""),
        "embeddings": [hash_embedding(t, dim) for t in texts],  # hashed straight to ``dimensions``
        "total_duration": 1_000_000,
        "load_duration": 100_000,
        "prompt_eval_count": sum(len(t.split()) for t in texts),
    }


# the answer, in Ollama's (or OpenAI's) JSON
def openai_models_payload(models: list[str]) -> dict[str, Any]:
    """What ``/v1/models`` lists, as OpenAI-compatible servers do."""
    data = [{"id": m, "object": "model", "created": 0, "owned_by": "local2"} for m in models]
    return {"object": "list", "data": data}


def key_matches(api_key: str | None, headers: Message) -> bool:
    """Whether a /v1 request carries the API key the server was given (None: no key asked)."""
    return api_key is None or headers.get("Authorization", "") == f"Bearer {api_key}"
