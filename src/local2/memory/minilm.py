"""all-MiniLM-L6-v2 as a small numpy forward pass over the shipped safetensors weights.

The model is a 6-layer, 384-wide BERT (22M parameters). Running it through PyTorch and
sentence-transformers cost 18-28 s of imports and ~1 GB of installed packages; this module
needs only numpy, ``tokenizers`` and ``safetensors`` (imported lazily, ~0.3 s) and gives the
same vectors (cosine >= 0.999 against sentence-transformers: ``bench/minilm_runtime.py``).
It reproduces what sentence-transformers does for this model: WordPiece tokens truncated to
256, BERT encoder, mean pooling over the attention mask, L2 normalisation.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length (tokenizer.json says 128)


def _erf(x: np.ndarray) -> np.ndarray:
    """Error function (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7): numpy has none."""
    import numpy as np

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
    import numpy as np

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
        import numpy as np

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
        import numpy as np

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
        import numpy as np

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
    import numpy as np

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
