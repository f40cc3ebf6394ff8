"""The embedded model is freed at exit, while the interpreter still works: llama-cpp-python's
finalizers, left to run at shutdown, printed ``TypeError: 'NoneType' object is not callable``
from ``free_model``. And its OpenMP threads sleep at barriers unless the person says
otherwise (``OMP_WAIT_POLICY``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow

SCRIPT = """
import os
from local2.models import _embedded as embedded
model = embedded.EmbeddedChatModel(max_tokens=4)
model.invoke("Hi")
print(os.environ.get("OMP_WAIT_POLICY"))
print(len(embedded._cache))
"""


def test_a_process_that_used_the_model_exits_cleanly_with_it_freed() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["PASSIVE", "1"]  # the product's default, one model loaded
    assert "Traceback" not in done.stderr and "NoneType" not in done.stderr, done.stderr


def test_close_models_frees_each_loaded_model_and_a_later_load_starts_afresh() -> None:
    from local2.models import _embedded as embedded

    path = str(embedded.default_model_path())
    llama, _ = embedded.load_llama(path, 512, None)
    embedded.close_models()
    assert embedded._cache == {}
    assert llama._model.model is None  # freed: llama.cpp's model handle is gone
    again, _ = embedded.load_llama(path, 512, None)
    assert again is not llama and again._model.model is not None
    embedded.close_models()


def test_a_policy_the_person_chose_is_kept() -> None:
    env = {**os.environ, "OMP_WAIT_POLICY": "ACTIVE"}
    script = "from local2.models import _embedded as embedded; embedded.passive_openmp_waits(); "
    script += "import os; print(os.environ['OMP_WAIT_POLICY'])"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.stdout.strip() == "ACTIVE", done.stderr
