"""A lazy face's names (``lazy_loader`` reading the package's ``__init__.pyi``) load like
``import`` does, threads included."""

from __future__ import annotations

import importlib
import sys
import threading
import types
from pathlib import Path

import pytest

INIT = """\
import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
"""
STUB = "from .slow import value as value\n"

SLOW = """\
import faces_gate

faces_gate.started.set()
faces_gate.release.wait(30)
value = 42
"""


def test_a_name_another_thread_is_still_importing_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm-up thread imports a module while a command reads a name of it through a
    face: the name is waited for, not missed (a ``local2 ask`` once failed with "No module
    named 'local2.tools.routing.route'")."""
    gate = types.ModuleType("faces_gate")
    gate.started = threading.Event()  # type: ignore[attr-defined]
    gate.release = threading.Event()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "faces_gate", gate)
    (tmp_path / "slowface").mkdir()
    (tmp_path / "slowface" / "__init__.py").write_text(INIT)
    (tmp_path / "slowface" / "__init__.pyi").write_text(STUB)
    (tmp_path / "slowface" / "slow.py").write_text(SLOW)
    monkeypatch.syspath_prepend(str(tmp_path))
    got: dict[str, object] = {}

    def through_the_face() -> None:
        try:
            got["value"] = importlib.import_module("slowface").value
        except Exception as exc:  # what the reader saw, for the assertion below
            got["error"] = exc

    importer = threading.Thread(target=importlib.import_module, args=("slowface.slow",))
    try:
        importer.start()
        assert gate.started.wait(30)  # type: ignore[attr-defined]
        reader = threading.Thread(target=through_the_face)
        reader.start()
        reader.join(1)
        assert reader.is_alive(), got  # waiting for the import, not failed
        gate.release.set()  # type: ignore[attr-defined]
        reader.join(30)
        importer.join(30)
        assert got == {"value": 42}
    finally:
        gate.release.set()  # type: ignore[attr-defined]
        for name in ("slowface", "slowface.slow"):
            sys.modules.pop(name, None)
