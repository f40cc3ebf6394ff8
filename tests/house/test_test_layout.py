"""The tests mirror the code (docs/architecture.md): a folder per feature or surface, each
with its conftest, and no test module importing another. A test module's names are its own;
what several share is a fixture (the folder's conftest, or tests/conftest.py for every
folder) or a helper in a module named as one (``tests/<feature>/helpers.py``,
``tests/<feature>/<topic>_helpers.py``, or ``tests/kit/``)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
KIT = TESTS / "kit"
NOT_FEATURES = {"kit", "fixtures", "__pycache__"}


def feature_folders() -> list[Path]:
    return sorted(
        d
        for d in TESTS.iterdir()
        if d.is_dir() and d.name not in NOT_FEATURES and any(d.glob("test_*.py"))
    )


@functools.cache
def modules_of_the_tests() -> list[Path]:
    """Every module of the tests (test modules, conftests, helpers, the kit)."""
    return sorted(p for p in TESTS.rglob("*.py") if "fixtures" not in p.relative_to(TESTS).parts)


def module_file(module: str) -> Path | None:
    """The file of ``tests.x.y`` (a module or a package), None when it is not one."""
    path = ROOT.joinpath(*module.split("."))
    for found in (path.with_suffix(".py"), path / "__init__.py"):
        if found.is_file():
            return found
    return None


def is_test_module(path: Path) -> bool:
    return path.name.startswith("test_") or path.name == "conftest.py"


def imported_files(path: Path) -> list[tuple[int, Path]]:
    """The files of ``tests`` modules that ``path`` imports: ``from tests.a.b import c`` (and
    ``c`` itself when it is a module), ``import tests.a.b``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        for module in modules:
            if module == "tests" or module.startswith("tests."):
                file = module_file(module)
                if file is not None and file.name != "__init__.py":
                    found.append((node.lineno, file))
    return found


def test_no_test_module_imports_another_test_module_or_a_conftest() -> None:
    """``from tests.http.test_api import Served`` made one test file another's library: a
    helper moves to a helpers module, a fixture to a conftest (pytest gives it by name)."""
    reaching = [
        f"{path.relative_to(ROOT)}:{line}: {file.relative_to(ROOT)}"
        for path in modules_of_the_tests()
        for line, file in imported_files(path)
        if is_test_module(file)
    ]
    assert reaching == []


def test_the_rule_above_sees_an_import_of_a_test_module(tmp_path: Path) -> None:
    """It cannot pass by missing the form: both spellings of such an import are found."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from tests.house.test_docs import cli_commands\n"
        "from tests.house import test_docs\n"
        "import tests.conftest\n"
        "from tests.kit.helpers import make_settings\n"
    )
    found = [file.name for _, file in imported_files(probe)]
    assert found.count("test_docs.py") == 2 and "conftest.py" in found
    assert [f for f in found if not is_test_module(Path(f))] == ["helpers.py"]


def test_each_feature_folder_has_its_conftest() -> None:
    missing = [d.name for d in feature_folders() if not (d / "conftest.py").is_file()]
    assert len(feature_folders()) > 10  # tests/<feature>/ found
    assert missing == []


def test_every_other_module_is_named_as_a_helper() -> None:
    """Beside test modules and the conftest, a feature folder holds only helpers modules; what
    any folder shares lives in ``tests/kit/``. No test module is at the top of ``tests/``."""
    odd = [
        str(p.relative_to(TESTS))
        for d in feature_folders()
        for p in sorted(d.glob("*.py"))
        if not is_test_module(p)
        and p.name != "__init__.py"
        and not (p.stem == "helpers" or p.stem.endswith("_helpers"))
    ]
    top = [p.name for p in TESTS.glob("*.py") if p.name not in ("__init__.py", "conftest.py")]
    assert odd == [] and top == []
    assert not [p for p in KIT.glob("*.py") if is_test_module(p)]  # the kit holds no tests
