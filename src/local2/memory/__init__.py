"""Long-term memory: the engram store on Chroma and the embedders behind it."""

from local2.memory.embeddings import (
    Embedder,
    EmbeddingError,
    LexicalEmbedder,
    MiniLMEmbedder,
    OllamaEmbedder,
    make_embedder,
)
from local2.memory.store import EmbedderMismatchError, EngramStore, MemoryStoreError

__all__ = [
    "Embedder",
    "EmbedderMismatchError",
    "EmbeddingError",
    "EngramStore",
    "LexicalEmbedder",
    "MemoryStoreError",
    "MiniLMEmbedder",
    "OllamaEmbedder",
    "make_embedder",
]
