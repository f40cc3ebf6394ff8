"""Embedders: Ollama's prefixes on the wire, clear errors, the offline MiniLM, the fallback."""

from __future__ import annotations

import math

import pytest

from local2.config import load_settings
from local2.errors import EmbeddingError
from local2.memory._embedders import (
    MINILM_NAME,
    LexicalEmbedder,
    MiniLMEmbedder,
    OllamaEmbedder,
    make_embedder,
)
from local2_testkit.ollama_server import FakeOllama


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _settings(tmp_path, host: str, embedder: str = "auto"):
    return load_settings(
        overrides={
            "system": {"data_dir": str(tmp_path), "ollama_host": host},
            "memory": {"embedder": embedder},
        }
    )


def test_ollama_sends_document_and_query_prefixes():
    with FakeOllama() as srv:
        emb = OllamaEmbedder(srv.url, "nomic-embed-text")
        docs = emb.embed_documents(["The cabin wifi is larch-meadow.", "Biscuit is a cat."])
        query = emb.embed_query("what is the wifi password")
        bodies = srv.embed_requests
    assert len(docs) == 2 and len(query) == len(docs[0])
    assert bodies[0]["model"] == "nomic-embed-text"
    assert bodies[0]["input"] == [
        "search_document: The cabin wifi is larch-meadow.",
        "search_document: Biscuit is a cat.",
    ]
    assert bodies[1]["input"] == ["search_query: what is the wifi password"]
    assert emb.scheme == "nomic"


def test_ollama_model_without_prefix_scheme_sends_text_as_is():
    with FakeOllama(models=["all-minilm"]) as srv:
        emb = OllamaEmbedder(srv.url, "all-minilm")
        emb.embed_query("hello")
        assert srv.embed_requests[0]["input"] == ["hello"]
    assert emb.scheme == "none"


def test_ollama_model_not_pulled_names_the_pull_command():
    with FakeOllama(models=["qwen3:4b"]) as srv:
        emb = OllamaEmbedder(srv.url, "nomic-embed-text")
        assert not emb.available()
        with pytest.raises(EmbeddingError, match="ollama pull nomic-embed-text"):
            emb.embed_query("anything")


def test_ollama_down_names_ollama_serve():
    srv = FakeOllama().start()
    url = srv.url
    srv.stop()  # the port is closed now: a real connection refusal
    emb = OllamaEmbedder(url, "nomic-embed-text", timeout_s=2)
    assert not emb.available(timeout_s=0.5)
    with pytest.raises(EmbeddingError, match="ollama serve"):
        emb.embed_documents(["x"])


def test_auto_prefers_ollama_when_the_model_is_pulled(tmp_path):
    with FakeOllama() as srv:
        chosen = make_embedder(_settings(tmp_path, srv.url))
    assert isinstance(chosen, OllamaEmbedder) and chosen.name == "nomic-embed-text"


def test_auto_falls_back_to_minilm_without_ollama(tmp_path):
    with FakeOllama(models=["qwen3:4b"]) as srv:  # Ollama up, embedding model not pulled
        chosen = make_embedder(_settings(tmp_path, srv.url))
    assert isinstance(chosen, MiniLMEmbedder) and chosen.name == MINILM_NAME


def test_auto_keeps_the_recorded_embedder_when_usable(tmp_path):
    with FakeOllama() as srv:  # Ollama would win, but the store was built with lexical
        chosen = make_embedder(_settings(tmp_path, srv.url), prefer="lexical-hash-256")
    assert isinstance(chosen, LexicalEmbedder) and chosen.dim == 256


def test_explicit_choices(tmp_path):
    host = "http://127.0.0.1:9"
    assert isinstance(make_embedder(_settings(tmp_path, host, "lexical")), LexicalEmbedder)
    assert isinstance(make_embedder(_settings(tmp_path, host, "minilm")), MiniLMEmbedder)
    assert isinstance(make_embedder(_settings(tmp_path, host, "ollama")), OllamaEmbedder)


def test_lexical_is_unit_length_and_word_sensitive():
    emb = LexicalEmbedder()
    a, b, c = emb.embed_documents(
        ["the cabin wifi password", "wifi password for the cabin", "grandma bakes lemon cake"]
    )
    assert math.isclose(math.sqrt(_cos(a, a)), 1.0, rel_tol=1e-9)
    assert _cos(a, b) > 0.85  # 4 shared words of 4 and 5
    assert abs(_cos(a, c)) < 0.3
    assert emb.embed_query("the cabin wifi password") == a
    assert math.isclose(_cos(*emb.embed_documents(["", ""])), 1.0)  # empty text: valid vector


@pytest.mark.slow
def test_minilm_offline_normalised_and_semantic():
    emb = MiniLMEmbedder()
    docs = emb.embed_documents(
        ["My sister's cat is named Biscuit.", "The office door code is 7391."]
    )
    query = emb.embed_query("What did my sister call her kitten?")
    assert len(query) == 384
    assert all(math.isclose(math.sqrt(_cos(v, v)), 1.0, rel_tol=1e-4) for v in [*docs, query])
    assert _cos(query, docs[0]) > _cos(query, docs[1]) + 0.2
    assert emb.scheme == "none" and emb.embed_query("x") == emb.embed_documents(["x"])[0]
