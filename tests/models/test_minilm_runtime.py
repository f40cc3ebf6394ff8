"""The offline MiniLM gives sentence-transformers' vectors, without torch: exactly on numpy,
within int8 rounding on onnxruntime (``local2.memory._embedders``).

The reference vectors were captured from sentence-transformers 5.7 on PyTorch (the previous
runtime) over 100 sentences: 90 from the extraction corpus and 10 edge cases (empty text,
CJK, emoji, code, texts past the 256-token cut); see ``bench/minilm_runtime.py --capture``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from local2.memory._embedders import MiniLMEmbedder, minilm_available

FIXTURE = Path(__file__).parents[1] / "fixtures" / "minilm_reference.npz"

pytestmark = pytest.mark.skipif(not minilm_available(), reason="offline MiniLM not installed")


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray]:
    data = np.load(FIXTURE)
    return [str(s) for s in data["sentences"]], data["vectors"]


# runtime: (lowest cosine, mean cosine) against sentence-transformers
AGREEMENT = {"numpy": (0.999, 0.999), "onnx": (0.975, 0.99)}


@pytest.mark.parametrize("runtime", sorted(AGREEMENT))
def test_agrees_with_sentence_transformers_on_100_sentences(reference, runtime: str) -> None:
    if runtime == "onnx":
        pytest.importorskip("onnxruntime")
        pytest.importorskip("onnx")
    texts, expected = reference
    assert len(texts) == 100 and expected.shape == (100, 384)
    got = np.array(MiniLMEmbedder(runtime=runtime).embed_documents(texts), dtype=np.float32)
    cosine = (got * expected).sum(axis=1)
    worst = int(cosine.argmin())
    lowest, mean = AGREEMENT[runtime]
    assert cosine.min() >= lowest, f"sentence {worst} {texts[worst][:60]!r}: {cosine[worst]}"
    assert cosine.mean() >= mean
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_one_at_a_time_equals_batched(reference) -> None:
    """Batches are padded to their longest text: padding must not change any vector."""
    texts, expected = reference
    emb = MiniLMEmbedder(runtime="numpy")
    picked = [0, 45, 90, 91, 94, 95, 98, 99]  # short, long, empty, CJK, code, truncated
    for i in picked:
        alone = np.array(emb.embed_query(texts[i]), dtype=np.float32)
        assert float(alone @ expected[i]) >= 0.999, texts[i][:60]


def test_runs_without_torch_or_sentence_transformers() -> None:
    code = (
        "import sys; from local2.memory._embedders import MiniLMEmbedder; "
        "v = MiniLMEmbedder().embed_query('hello'); assert len(v) == 384; "
        "heavy = {'torch', 'sentence_transformers', 'transformers'} & set(sys.modules); "
        "assert not heavy, heavy"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
