"""The product's wheel carries the product: no test double (the test kit is a distribution of
its own, testkit/), and none of the kit's writers among its requirements."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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


def test_the_wheel_has_the_product_and_no_test_kit(tmp_path: Path) -> None:
    with zipfile.ZipFile(built_wheel(tmp_path)) as wheel:
        names = wheel.namelist()
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        requires = [
            line.split(":", 1)[1].strip().lower()
            for line in wheel.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line
        ]
    assert "local2/cli/__init__.py" in names
    assert "local2/config/generator.yaml" in names
    kit = [n for n in names if "testkit" in n or n.startswith("local2/testing/")]
    assert kit == []
    assert not any(r.startswith(("reportlab", "python-docx")) for r in requires), requires
