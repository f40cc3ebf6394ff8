"""The package keeps its shape: small modules and classes, no reaching into another module's
private names. (The layers and the absence of import circles are ``lint-imports``' job, run
by ``make test``; see docs/architecture.md.)"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "local2"
TEST_KIT = ROOT / "testkit" / "src" / "local2_testkit"  # its own distribution, same rules
# Smell detectors, not a shape to fit: one idea reads in one file, however long it is, and a
# module or function past these bounds is almost always two ideas (issue 54 retired the
# 600/300/60 caps, which split code to fit them).
MAX_MODULE_LINES = 1500
MAX_FUNCTION_LINES = 120


def sources() -> list[Path]:
    """Every module of the product and of the test kit: the size and privacy rules hold for
    both, with no exemption."""
    return sorted(PACKAGE.rglob("*.py")) + sorted(TEST_KIT.rglob("*.py"))


@functools.cache
def modules() -> dict[str, ast.Module]:
    """Every module parsed once for the whole file (each test walks the same trees)."""
    found = {}
    for path in sources():
        top = PACKAGE.parent if PACKAGE in path.parents else TEST_KIT.parent
        name = ".".join(path.relative_to(top).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = ast.parse(path.read_text(), str(path))
    return found


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_no_module_or_function_is_past_the_smell_bounds() -> None:
    """Past 1,500 lines a module, and past 120 a function (``def`` to its last line), is
    almost always two ideas: name them apart. The package and the test kit alike."""
    too_long = []
    for name, tree in modules().items():
        lines = max((getattr(n, "end_lineno", 0) or 0) for n in ast.walk(tree)) if tree.body else 0
        if lines > MAX_MODULE_LINES:
            too_long.append(f"module {name}: {lines} lines")
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {size} lines")
    assert too_long == []


def test_no_module_imports_another_modules_private_names() -> None:
    found = []
    for name, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("local2"):
                found += [
                    f"{name}: {a.name} from {node.module}" for a in node.names if is_private(a.name)
                ]
    assert found == []


def private_members() -> dict[str, set[str]]:
    """Each module's classes' private attributes and methods (``def _x``, ``self._x = ...``)."""
    members: dict[str, set[str]] = defaultdict(set)
    for name, tree in modules().items():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and is_private(
                    node.name
                ):
                    members[name].add(node.name)
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Store)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "self"
                    and is_private(node.attr)
                ):
                    members[name].add(node.attr)
    return members


def test_no_module_reaches_into_another_modules_private_members() -> None:
    """``agent._head(...)`` from another module is how the house lost its shape: ask the
    owner for a public method instead."""
    members = private_members()
    owners: dict[str, set[str]] = defaultdict(set)  # a private member's name -> its modules
    for module, names in members.items():
        for member in names:
            owners[member].add(module)
    reached = []
    for name, tree in modules().items():
        own = members.get(name, set())
        others = {m for m, where in owners.items() if where - {name}}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not is_private(node.attr):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr in others and node.attr not in own:
                reached.append(f"{name}:{node.lineno} .{node.attr}")
    assert reached == []


def _package_of(path: Path) -> str | None:
    """The top package a module is in (None for a base module at the package's root)."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else None


def _imported_module(node: ast.ImportFrom, path: Path) -> str:
    """The module an ``ImportFrom`` names, a relative one resolved against ``path``."""
    if not node.level:
        return node.module or ""
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _imports_across_packages() -> list[tuple[str, list[str], list[str]]]:
    """Each import of another package's module: (where, the module's parts, its names)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = _package_of(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            parts = _imported_module(node, path).split(".")
            if parts[0] != "local2" or len(parts) < 2 or parts[1] == own:
                continue
            if not (PACKAGE / parts[1] / "__init__.py").exists():
                continue  # a base module (errors, events, ids, ports): all of it is public
            where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
            found.append((where, parts, [alias.name for alias in node.names]))
    return found


def test_imports_across_packages_go_through_their_faces() -> None:
    """``from local2.tools import web_tools``, never ``from local2.tools._web import
    web_tools``, outside ``tools/`` (inside a package imports are free): what another package
    uses is declared in its face, and mypy reads it there as the real type (each face itself
    is held by ``tests/house/test_exported_members.py``)."""
    bypassing = [
        f"{where}: {'.'.join(parts)}"
        for where, parts, _ in _imports_across_packages()
        if len(parts) > 2
    ]
    assert not bypassing, "bypassing a face:\n" + "\n".join(bypassing)


def test_packages_are_used_only_through_their_faces() -> None:
    """A package's face (``__all__``) is what other packages may use: every import across
    packages names something there (docs/architecture.md, "Public faces")."""
    import importlib

    faces: dict[str, set[str]] = {}
    outside: list[str] = []
    for where, parts, names in _imports_across_packages():
        if parts[1] not in faces:
            faces[parts[1]] = set(importlib.import_module(f"local2.{parts[1]}").__all__)
        outside += [f"{where}: {'.'.join(parts)}.{n}" for n in names if n not in faces[parts[1]]]
    assert not outside, "not in the package's __all__:\n" + "\n".join(outside)


def test_surfaces_contract_forbids_every_feature_and_part() -> None:
    """The "surfaces import only the service, the base and the faces below" contract names
    every package below the service and above the base (``evals`` too): a new package is not
    left out. Each is forbidden whole, or only below its face (``local2.storage.**``)."""
    import tomllib

    config = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    surfaces = next(c for c in contracts if c["name"].startswith("Surfaces import only"))
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    below_service = layers[layers.index("service") + 1 : -1]
    between = [p.strip() for layer in below_service for p in layer.split(":")]
    named = [m.removesuffix(".**") for m in surfaces["forbidden_modules"]]
    assert sorted(f"local2.{p}" for p in between) == sorted(named)


def test_the_service_face_lists_only_the_services_own_names() -> None:
    """``local2.service``'s face declares what the service itself is (the agent, its parts,
    how it is built, sign-in): nothing forwarded from a package below it. A surface takes a
    vote's rating or the people roster from that package's own face (docs/architecture.md,
    "Public faces")."""
    face = modules()["local2.service"]
    forwarded = [
        f"{node.module}.{alias.name}"
        for node in ast.walk(face)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("local2.")
        for alias in node.names
        if not (node.module or "").startswith(("local2.service", "local2.faces"))
    ]
    assert forwarded == []


def test_every_name_a_face_declares_is_there() -> None:
    import importlib

    for init in sorted(PACKAGE.glob("*/__init__.py")):
        package = importlib.import_module(f"local2.{init.parent.name}")
        for name in getattr(package, "__all__", []):
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"


def test_the_agent_composes_and_forwards_nothing() -> None:
    """One way in (docs/architecture.md): no method or property of ``Agent`` only hands a
    call on to one of its parts (``return self.turns.ask(...)``): a caller asks the part."""
    agent = next(
        n
        for n in modules()["local2.service.agent"].body
        if isinstance(n, ast.ClassDef) and n.name == "Agent"
    )
    forwarding = []
    for method in agent.body:
        if not isinstance(method, ast.FunctionDef) or is_private(method.name):
            continue
        body = [s for s in method.body if not isinstance(s, ast.Expr)]  # its docstring
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            continue
        value = body[0].value
        target = value.func if isinstance(value, ast.Call) else value
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Attribute)
            and isinstance(target.value.value, ast.Name)
            and target.value.value.id == "self"
        ):
            forwarding.append(f"Agent.{method.name}: {ast.unparse(value)}")
    assert forwarding == []
    assigned = [n for n in ast.walk(agent) if isinstance(n, ast.Assign)]
    assert not [a for a in assigned if "Delegated" in ast.unparse(a)]  # nor a descriptor


SURFACES = ("cli", "server", "ui", "http", "platform", "mcp_server")
# What holds the parts below the service: the agent's services and storage, the people store
# behind Access. A surface asks the service's parts and methods instead.
PART_HOLDERS = {"services", "storage", "people"}


def test_surfaces_reach_no_part_through_the_service() -> None:
    """The surfaces build and drive nothing below the service: no ``agent.services.x``,
    ``agent.storage``, ``access.people.by_token(...)`` (docs/architecture.md, "Public
    faces")."""
    reached = []
    for surface in SURFACES:
        for path in sorted((PACKAGE / surface).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr in PART_HOLDERS:
                    reached.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {ast.unparse(node)}")
    assert reached == []


UNTYPED_DICT = ["dict", "[", "str", ",", "Any", "]"]


def _untyped_dicts_without_a_why(path: Path) -> list[int]:
    """The lines of ``path`` where ``dict[str, Any]`` is written (code, not a string or a
    comment) with no comment on that line or on a comment line just above it."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    commented = {t.start[0] for t in tokens if t.type == tokenize.COMMENT}
    code = [t for t in tokens if t.type in (tokenize.NAME, tokenize.OP)]
    found = []
    for i in range(len(code) - len(UNTYPED_DICT) + 1):
        if [t.string for t in code[i : i + len(UNTYPED_DICT)]] != UNTYPED_DICT:
            continue
        line = code[i].start[0]
        above = lines[line - 2].lstrip() if line > 1 else ""
        if line not in commented and not above.startswith("#"):
            found.append(line)
    return found


def test_every_untyped_dict_says_what_outside_data_it_holds() -> None:
    """A shape that is ours has its type (a TypedDict or model in ``local2.contracts`` or
    the module that owns it); ``dict[str, Any]`` is left only where the data comes from
    outside and is not checked yet (JSON a model wrote, an HTTP body, YAML, Chroma
    metadata, a Gradio value, a library's own dict, a JSON schema document), and a comment
    on its line, or on the line above, says which."""
    bare = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sources()
        for line in _untyped_dicts_without_a_why(path)
    ]
    assert not bare, "type it, or say what outside data it is:\n" + "\n".join(bare)


# Issue 54: imports sit at the top of a module. One left inside a function says why on its
# line, or on the comment line above it (or above the run of imports it opens with): the
# measured cost it keeps off a start-up, or the circle it breaks. Every package is checked;
# a package not yet put in order would be named here.
NOT_YET_CHECKED_FOR_FUNCTION_IMPORTS: tuple[str, ...] = ()


def _function_imports_without_a_why(source: str) -> list[int]:
    """The lines of the imports inside functions of ``source`` (not under
    ``if TYPE_CHECKING:``) with no comment on their own lines, on the line just above them,
    or on a comment line above an earlier import of the run of imports they belong to."""
    tree = ast.parse(source)
    lines = source.splitlines()
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    commented = {t.start[0] for t in tokens if t.type == tokenize.COMMENT}

    def comment_above(statement: ast.stmt) -> bool:
        line = statement.lineno
        return line > 1 and lines[line - 2].lstrip().startswith("#")

    bare: list[int] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            covered = False  # by a comment line above an earlier import of this run
            for statement in body:
                if not isinstance(statement, ast.Import | ast.ImportFrom):
                    covered = False
                    continue
                covered = covered or comment_above(statement)
                own = set(range(statement.lineno, (statement.end_lineno or 0) + 1))
                if in_function and not (covered or own & commented):
                    bare.append(statement.lineno)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inner = in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            )
            walk(child, inner)

    walk(tree, False)
    return bare


def test_an_import_inside_a_function_says_why_it_is_not_at_the_top() -> None:
    """Issue 54: plain imports at the top of the module; one that stays inside a function
    names, in a comment, the start-up cost it keeps away (``# lazy: chromadb: ~0.6 s ...``)
    or the import circle it breaks."""
    skipped = [PACKAGE / name for name in NOT_YET_CHECKED_FOR_FUNCTION_IMPORTS]
    bare = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not any(folder in path.parents for folder in skipped)
        for line in _function_imports_without_a_why(path.read_text(encoding="utf-8"))
    ]
    assert not bare, (
        "move it to the top, or say on its line (or the line above) what it costs at start-up "
        "or which circle it breaks:\n" + "\n".join(bare)
    )


def test_the_function_import_check_tells_a_bare_import_from_an_explained_one() -> None:
    """The check itself: a bare import inside a function is found, a commented one, a run
    under one comment, a module-level one and one under ``TYPE_CHECKING`` are not."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "import json\n"
        "if TYPE_CHECKING:\n"
        "    import os\n"
        "def bare():\n"
        "    import csv\n"
        "def explained():\n"
        "    import csv  # lazy: 2 ms\n"
        "    # lazy: 40 ms\n"
        "    import decimal\n"
        "\n"
        "    import fractions\n"
        "    x = 1\n"
        "    import uuid\n"
        "class Held:\n"
        "    def method(self):\n"
        "        if self:\n"
        "            from http import server\n"
    )
    assert _function_imports_without_a_why(source) == [6, 14, 18]
