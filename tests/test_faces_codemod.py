"""scripts/faces_codemod.py on a copy of the package: imports that bypass a face become face
imports (aliases, relative imports, TYPE_CHECKING blocks and imports inside functions too),
a missing name is added to the face, a private name and a name its module lacks are left
and reported, and a second run changes nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BYPASSING = """
from typing import TYPE_CHECKING

from local2.tools.web_fetch import run_sync
from ..tools.routing import route as rt, first_url
from local2.tools.web_fetch import _Decoder
from local2.tools.corpus.documents import CorpusDocument as Doc

if TYPE_CHECKING:
    from local2.tools.passages import Focused


def _inner() -> object:
    from local2.tools.netguard import Target
    from local2.tools.web_fetch import no_such_name

    return Target, rt, first_url, Doc, _Decoder, run_sync, Focused, no_such_name
"""


def run(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.run(
        [sys.executable, str(tree / "scripts" / "faces_codemod.py"), *args],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_codemod_rewrites_bypassing_imports_and_adds_names_to_the_face(
    tmp_path: Path,
) -> None:
    shutil.copytree(ROOT / "src" / "local2", tmp_path / "src" / "local2")
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "faces_codemod.py", tmp_path / "scripts")
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    module = tmp_path / "src" / "local2" / "graph" / "recall.py"
    text = module.read_text(encoding="utf-8")
    future = "from __future__ import annotations\n"
    module.write_text(text.replace(future, future + BYPASSING, 1), encoding="utf-8")

    done = run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "web_fetch._Decoder: a private name" in done.stdout
    assert "web_fetch.no_such_name: local2.tools.web_fetch has no no_such_name" in done.stdout
    assert "names added to faces" in done.stdout
    rewritten = module.read_text(encoding="utf-8")
    for line in (
        "from local2.tools import CorpusDocument as Doc",
        "from local2.tools import route as rt",
        "from local2.tools.web_fetch import _Decoder",
        "    from local2.tools import Focused",
        "    from local2.tools import Target",
        "    from local2.tools.web_fetch import no_such_name",
    ):
        assert line in rewritten.splitlines()
    assert "run_sync" in rewritten and "local2.tools.web_fetch import run_sync" not in rewritten
    assert "..tools" not in rewritten
    face = (tmp_path / "src" / "local2" / "tools" / "__init__.py").read_text(encoding="utf-8")
    for added in (
        "from local2.tools.netguard import Target as Target",
        "from local2.tools.passages import Focused as Focused",
        "from local2.tools.routing import first_url as first_url",
        "from local2.tools.web_fetch import run_sync as run_sync",
    ):
        assert added in face
    ruff = Path(sys.executable).with_name("ruff")
    lint = subprocess.run(
        [
            str(ruff),
            "check",
            "--select",
            "I,F",
            str(module),
            str(tmp_path / "src" / "local2" / "tools"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout
    loads = subprocess.run(
        [
            sys.executable,
            "-c",
            "from local2.tools import run_sync, Focused; import local2.graph.recall",
        ],
        env={**os.environ, "PYTHONPATH": str(tmp_path / "src")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert loads.returncode == 0, loads.stderr

    again = run(tmp_path, "--check")
    assert again.returncode == 0, again.stdout
    assert "0 files to rewrite, 0 names added" in again.stdout


def test_the_package_has_no_import_left_for_the_codemod() -> None:
    done = run(ROOT, "--check")
    assert done.returncode == 0, done.stdout
