"""Every package's face, held like httpx's ``tests/house/test_exported_members.py``
(docs/architecture.md, "Public faces"): a package's ``__init__`` (or, for a face loaded on
first use, its ``__init__.pyi``) lists in ``__all__`` exactly what it imports or defines,
every name there resolves, and nothing outside a package imports its private modules."""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "local2"
# Who uses the packages through their faces: the product and the test kit. The tests and
# the benchmarks are left out of the private-module rule on purpose: a test or a benchmark
# of a module's internals imports that module (``from local2.service.chat import _running``
# to stand in for its clock, ``local2.documents._pdf`` to time the PDF reader alone), as
# httpx's tests import ``httpx._utils``; what they use of a face, they take from the face.
IMPORTERS = {
    "src": PACKAGE,
    "testkit": ROOT / "testkit" / "src" / "local2_testkit",
}


def package_name(init: Path) -> str:
    return ".".join(("local2", *init.parent.relative_to(PACKAGE).parts))


FACES = sorted(
    init
    for init in PACKAGE.rglob("__init__.py")
    if (init.with_suffix(".pyi")).exists() or "__all__" in init.read_text(encoding="utf-8")
)


@functools.cache
def face_tree(init: Path) -> ast.Module:
    """The face as written: the stub when the face is loaded on first use."""
    stub = init.with_suffix(".pyi")
    source = stub if stub.exists() else init
    return ast.parse(source.read_text(encoding="utf-8"), str(source))


def bound_names(tree: ast.Module) -> set[str]:
    """The public names a face binds at its top level: what it imports, defines or assigns."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {n for n in names if not n.startswith("_")}


def declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return value
    return None


# The packages merged by cohesion behind their faces (issue 54): every module of theirs is
# private, so the face is their one way in and a new public module shows here.
ALL_PRIVATE = (
    "local2.bounded",
    "local2.critic",
    "local2.documents",
    "local2.files",
    "local2.library",
    "local2.models",
    "local2.retrieval",
    "local2.storage",
    "local2.service.chat",
    "local2.service.research",
    "local2.tools",
)
# The one public folder among the private ones: ``tools/search/`` is the search providers'
# plug-in folder, the extension point docs/architecture.md ("A web search provider") names.
# A provider is one file there, which the settings import by that package's name
# (``local2.config._search_registry.PROVIDERS_PACKAGE``), so its name and its modules' names
# are public; every other folder of a merged package is private (``tools/_corpus/``).
PLUG_IN_FOLDERS = {"local2.tools": ("search",)}


def test_there_are_faces_to_check() -> None:
    """The listing below is not empty by accident (a moved folder would pass every check)."""
    names = {package_name(init) for init in FACES}
    assert {"local2", "local2.storage", "local2.contracts", "local2.service"} <= names
    assert {*ALL_PRIVATE, "local2.tools"} <= names


@pytest.mark.parametrize("package", ALL_PRIVATE)
def test_a_merged_package_has_only_private_modules(package: str) -> None:
    folder = PACKAGE.parent.joinpath(*package.split("."))
    modules = sorted(path.name for path in folder.glob("*.py"))
    assert "__init__.py" in modules  # the folder is there: the check below is not vacuous
    assert [name for name in modules if not name.startswith("_")] == []
    folders = sorted(
        path.parent.name
        for path in folder.glob("*/__init__.py")
        if not path.parent.name.startswith("_")
    )
    assert folders == sorted(PLUG_IN_FOLDERS.get(package, ()))


def test_the_plug_in_folders_are_there() -> None:
    """A plug-in folder moved or renamed fails here, not silently (the check above would
    then pass with one public folder fewer)."""
    from local2.config._search_registry import PROVIDERS_PACKAGE

    assert PROVIDERS_PACKAGE == "local2.tools.search"
    for package, folders in PLUG_IN_FOLDERS.items():
        root = PACKAGE.parent.joinpath(*package.split("."))
        for name in folders:
            plug_ins = [p for p in (root / name).glob("*.py") if p.name != "__init__.py"]
            assert plug_ins, f"{package}.{name}: no plug-in there"
            assert [p.name for p in plug_ins if p.name.startswith("_")] == []


@pytest.mark.parametrize("init", FACES, ids=package_name)
def test_all_is_exactly_what_the_face_exports(init: Path) -> None:
    tree = face_tree(init)
    declared = declared_all(tree)
    assert declared is not None, f"{init}: no __all__"
    assert len(declared) == len(set(declared)), "each name once in __all__"
    assert set(declared) == bound_names(tree)
    package = importlib.import_module(package_name(init))
    assert set(package.__all__) == set(declared)  # the runtime face is the one written


@pytest.mark.parametrize("init", FACES, ids=package_name)
def test_every_name_in_all_resolves(init: Path) -> None:
    package = importlib.import_module(package_name(init))
    missing = [name for name in package.__all__ if getattr(package, name, None) is None]
    assert missing == []
    assert sorted(dir(package)) == sorted(set(dir(package)))


def private_part(module: str) -> str | None:
    """The package whose private module ``module`` is (``local2.storage`` for
    ``local2.storage._open.x``), or None when no part of it is private."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def is_module(package: str, name: str) -> bool:
    """``from package import name`` names a module of ``package`` (not an attribute)."""
    folder = PACKAGE.parent.joinpath(*package.split("."))
    return (folder / f"{name}.py").exists() or (folder / name / "__init__.py").exists()


@functools.cache
def imports() -> list[tuple[str, str, str]]:
    """Every import of a ``local2`` module: (where, importing module or file, the module)."""
    found = []
    for kind, top in IMPORTERS.items():
        for path in sorted(top.rglob("*.py")):
            if ".venv" in path.parts:
                continue
            if kind == "src":
                owner = ".".join(("local2", *path.relative_to(PACKAGE).with_suffix("").parts))
            else:
                owner = f"<{kind}>"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    modules = [node.module] + [
                        f"{node.module}.{a.name}"
                        for a in node.names
                        if is_module(node.module, a.name)
                    ]
                elif isinstance(node, ast.Import):
                    modules = [a.name for a in node.names]
                else:
                    continue
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found += [(where, owner, m) for m in modules if m.startswith("local2.")]
    return found


def test_nothing_outside_a_package_imports_its_private_modules() -> None:
    """``local2.storage._open`` is the storage's own: other packages and the test kit take
    ``open_storage`` from ``local2.storage``."""
    reaching = [
        f"{where}: {module}"
        for where, owner, module in imports()
        if (private := private_part(module)) is not None
        and not (owner == private or owner.startswith(private + "."))
    ]
    assert reaching == []


def test_private_part_names_the_owning_package() -> None:
    """The rule above reads the module path as intended (a check that cannot pass
    vacuously: an import of a private module from elsewhere is found)."""
    assert private_part("local2.storage._open") == "local2.storage"
    assert private_part("local2.service.chat._turns.TurnRunner") == "local2.service.chat"
    assert private_part(".".join(["local2", "storage", "open"])) is None  # a public path
    assert private_part("local2.__init__") is None


# The packages whose every module is private (``_modules``, as httpx spells it): what other
# packages use is the face alone. A package joins this list when its modules are renamed
# (contracts, graph, memory and research keep a public module or more for now); only
# what runs a package as a program stays public (``cli/__main__.py``: ``python -m
# local2.cli``). A package's folders are held above (``ALL_PRIVATE``, ``PLUG_IN_FOLDERS``:
# ``tools/search/``, the search providers' plug-in folder, is the one public folder).
PRIVATE_MODULES = [
    "arena",
    "bounded",
    "critic",
    "documents",
    "evals",
    "files",
    "library",
    "models",
    "references",
    "retrieval",
    "storage",
    "stories",
    "service.chat",
    "service.desks",
    "service.evals",
    "service.research",
    "service.watches",
    "tools",
    "cli",
    "config",
    "http",
    "mcp_server",
    "notify",
    "server",
    "ui",
    "watch",
]
PROGRAMS = {"__init__", "__main__"}


@pytest.mark.parametrize("package", PRIVATE_MODULES)
def test_every_module_of_the_package_is_private(package: str) -> None:
    folder = PACKAGE.joinpath(*package.split("."))
    assert (folder / "__init__.py").is_file(), f"{package} moved: update the list"
    public = sorted(
        path.name
        for path in folder.glob("*.py")
        if path.stem not in PROGRAMS and not path.stem.startswith("_")
    )
    assert public == [], f"local2.{package}: name them _modules, used through the face"
