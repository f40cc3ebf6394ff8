"""The offline MiniLM's int8 graph, kept once built: every process that embeds loaded it anew.

Building the graph from the shipped weights imports ``onnx`` and quantizes every layer: about
2 CPU-seconds, paid by each ``local2`` command whose memory uses MiniLM (against ~0.4 s to
open a kept copy). The copy is a file under the user's cache folder
(``$XDG_CACHE_HOME/local2/embedder``, else ``~/.cache/local2/embedder``), named by a hash of
what it was built from: the weights' file (path, size, time), the model's config and the
builder's own source. A change to any of them is another name, so a stale copy is never read;
only the newest few copies are kept. Nothing here is downloaded, and deleting
the folder loses nothing (the next load builds it again).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from local2.storage import keep_newest

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
