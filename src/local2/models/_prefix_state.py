"""llama.cpp's state after the fixed start of every prompt, kept on disk between runs.

The embedded model reads the same ~330-token system prompt and tool list before every first
answer: about 3 s of a small machine's CPU, on the way to the first token of every ``local2
ask``. llama.cpp can write its context (the KV cache of the tokens read so far) to a file and
read it back in milliseconds (``llama_state_save_file``/``llama_state_load_file``); the file
for that prefix is ~7.5 MB.

A file is named by a hash of everything its contents depend on: the model file (path, size,
modification time), the context size, the llama.cpp bindings' version and the prompt text.
Change any of them and the name changes, so a stale file is never read; a damaged one is
refused by llama.cpp, and the prefix is then read again. Loading is always safe for the
answer: llama.cpp reuses only the longest run of loaded tokens that the next prompt starts
with, and reads the rest.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local2.storage import keep_newest

if TYPE_CHECKING:
    from llama_cpp import Llama

log = logging.getLogger(__name__)

KEEP = 4  # newest state files kept: one per prompt set a person switches between
SUFFIX = ".llamastate"


def state_key(model_path: str, n_ctx: int, prompt: Any) -> str:
    """The file name for the state after reading ``prompt`` (any JSON-able description of
    it) with this model file, context size and llama.cpp."""
    # llama_cpp: 169 modules at import, only with the embedded model
    import llama_cpp

    stat = os.stat(model_path)
    identity = {
        "model": [os.path.abspath(model_path), stat.st_size, stat.st_mtime_ns],
        "n_ctx": n_ctx,
        "llama_cpp": llama_cpp.__version__,
        "prompt": prompt,
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return digest[:32] + SUFFIX


def load(llama: Llama, path: Path) -> bool:
    """Put the saved state at ``path`` into ``llama``; False (and ``llama`` reset) if there is
    none or llama.cpp refuses it."""
    # llama_cpp: 169 modules at import, only with the embedded model
    import llama_cpp

    if not path.is_file():
        return False
    capacity = llama.n_ctx()
    tokens = (llama_cpp.llama_token * capacity)()
    count = ctypes.c_size_t(0)
    llama.reset()  # type: ignore[no-untyped-call]  # llama_cpp leaves it unannotated
    if not llama_cpp.llama_state_load_file(
        llama.ctx, str(path).encode(), tokens, capacity, ctypes.byref(count)
    ):
        log.info("saved prompt state %s refused by llama.cpp; reading the prompt again", path)
        llama.reset()  # type: ignore[no-untyped-call]
        llama._ctx.kv_cache_clear()  # type: ignore[no-untyped-call]
        return False
    n = int(count.value)
    llama.input_ids[:n] = tokens[:n]
    llama.n_tokens = n
    # The saved logits are not the live decode's: the next prompt must decode at least one
    # token before sampling (what Llama.load_state does too).
    llama._requires_eval = True
    return True


def save(llama: Llama, path: Path) -> None:
    """Write ``llama``'s state (the tokens it has read and their KV cache) to ``path``,
    atomically, and drop all but the newest :data:`KEEP` state files beside it."""
    # llama_cpp: 169 modules at import, only with the embedded model
    import llama_cpp

    n = llama.n_tokens
    tokens = (llama_cpp.llama_token * n)(*llama.input_ids[:n].tolist())
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not llama_cpp.llama_state_save_file(llama.ctx, str(partial).encode(), tokens, n):
            log.info("llama.cpp could not save the prompt state to %s", partial)
            return
        os.replace(partial, path)
        prune(path.parent)
    except OSError as exc:  # a read-only or full disk: the next start reads the prompt again
        log.info("prompt state not saved to %s: %s", path, exc)
    finally:
        partial.unlink(missing_ok=True)


def prune(directory: Path, keep: int = KEEP) -> None:
    """Remove all but the ``keep`` most recently written state files."""
    keep_newest(directory, f"*{SUFFIX}", keep)
