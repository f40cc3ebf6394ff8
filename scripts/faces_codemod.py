"""Rewrite imports across packages that bypass a face into face imports.

``from local2.tools.web import web_tools`` in a module outside ``local2.tools`` becomes
``from local2.tools import web_tools``, and ``web_tools`` is added to the face (the
``if TYPE_CHECKING:`` block of ``local2/tools/__init__.py``, see ``local2/faces.py``) when it
is missing. Imports inside a package are left alone. ``as`` aliases, relative imports,
imports under ``TYPE_CHECKING`` and inside functions are rewritten in place; ruff then sorts
and formats the files touched. Re-runnable: a second run changes nothing.

A name is left bypassing its face, and reported, when the face cannot carry it: a private
name, a name the package also uses for a submodule, a name the face already gives to another
object, a name its module does not have (an import broken already), or a face whose
``__init__`` imports its own modules at load (a face import from one of them would meet the
package half made: an import cycle).

    python scripts/faces_codemod.py            # rewrite, then ruff
    python scripts/faces_codemod.py --check    # exit 1 if anything would change
    python scripts/faces_codemod.py --verify   # also import each changed module afresh
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "local2"
sys.path.insert(0, str(SRC))

from local2 import faces  # noqa: E402  (after the path is set)

FACE_BLOCK = (
    "\n\nif TYPE_CHECKING:\n{imports}else:\n    __getattr__ = lazy_face(__name__, __file__)\n"
)


def module_of(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute(node: ast.ImportFrom, path: Path) -> str:
    """The module an import names, a relative one resolved against ``path``."""
    if not node.level:
        return node.module or ""
    package = module_of(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def top_package(path: Path) -> str | None:
    """``local2.<package>`` a module is in (None for a base module such as ``local2.errors``)."""
    parts = path.relative_to(PACKAGE).parts
    return f"local2.{parts[0]}" if len(parts) > 1 else None


def face_of(module: str, own: str | None) -> str | None:
    """The face an import of ``module`` from package ``own`` must go through, or None when
    the import is free (same package, a base module, the face itself, not local2)."""
    parts = module.split(".")
    if parts[0] != "local2" or len(parts) < 3:
        return None
    package = ".".join(parts[:2])
    if package == own or not (PACKAGE / parts[1] / "__init__.py").exists():
        return None
    return package


@dataclass
class Face:
    """One package's face as its ``__init__`` declares it, and what this run adds."""

    package: str
    init: Path
    names: dict[str, str]
    eager: bool  # the __init__ imports its own modules at load: face imports would cycle
    added: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, package: str) -> Face:
        init = PACKAGE / package.split(".")[1] / "__init__.py"
        faces.face.cache_clear()
        names, _ = faces.face(package, str(init))
        return cls(package, init, dict(names), eager=eager_imports(init, package))

    def submodules(self) -> set[str]:
        folder = self.init.parent
        return {p.stem for p in folder.glob("*.py")} | {
            p.parent.name for p in folder.glob("*/__init__.py")
        }


def eager_imports(init: Path, package: str) -> bool:
    """Whether the ``__init__`` imports its own package's modules when it runs."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and absolute(node, init).startswith(package + "."):
            return True
        if isinstance(node, ast.Import) and any(
            a.name.startswith(package + ".") for a in node.names
        ):
            return True
    return False


def same_object(package: str, name: str, held: str, module: str) -> bool:
    """Whether the face's ``name`` (from ``held``) is ``module``'s (imported to compare)."""
    if held == module:
        return True
    try:
        return faces.load(package, held, name) is faces.load(package, module, name)
    except Exception:  # cannot tell: treat as different
        return False


def defines(module: str, name: str) -> bool:
    """Whether ``module`` has ``name`` at run time, read from its source: a definition, an
    assignment or an import at its top level (not only under ``TYPE_CHECKING``), a name its
    face declares, or a submodule."""
    folder = SRC.joinpath(*module.split("."))
    if (folder / f"{name}.py").exists() or (folder / name / "__init__.py").exists():
        return True
    path = folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")
    if not path.exists():
        return False
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if path.name == "__init__.py":
        faces.face.cache_clear()
        if name in faces.face(module, str(path))[0]:
            return True
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.If | ast.Try) and not (
            isinstance(node, ast.If) and faces.is_type_checking(node.test)
        ):
            return True  # names made conditionally: trust the import
    return name in found


class Plan:
    """What to rewrite and add, and what is left (with why)."""

    def __init__(self) -> None:
        self.faces: dict[str, Face] = {}
        self.skipped: list[str] = []

    def face(self, package: str) -> Face:
        if package not in self.faces:
            self.faces[package] = Face.read(package)
        return self.faces[package]

    def through_face(self, where: str, package: str, module: str, name: str) -> bool:
        """Whether ``name`` from ``module`` can come through ``package``'s face (added to it
        when missing); a reason is recorded when not."""
        face = self.face(package)
        why = ""
        held = face.names.get(name) or face.added.get(name)
        if face.eager:
            why = f"{package}'s __init__ imports its own modules at load (a cycle)"
        elif name.startswith("_"):
            why = "a private name"
        elif held is not None:
            if not same_object(package, name, held, module):
                why = f"{package}'s face gives {name} to {held}"
        elif name in face.submodules():
            why = f"{package} has a submodule named {name}"
        elif not defines(module, name):
            why = f"{module} has no {name} (the import is broken already)"
        else:
            face.added[name] = module
        if why:
            self.skipped.append(f"{where}: {module}.{name}: {why}")
        return not why


def rewritten(node: ast.ImportFrom, path: Path, plan: Plan) -> list[str] | None:
    """The statements that replace ``node`` (without indentation), or None to keep it."""
    module = absolute(node, path)
    package = face_of(module, top_package(path))
    if package is None:
        return None
    where = f"{path.relative_to(ROOT)}:{node.lineno}"
    moved = [a for a in node.names if plan.through_face(where, package, module, a.name)]
    if not moved:
        return None
    kept = [a for a in node.names if a not in moved]

    def statement(source: str, aliases: list[ast.alias]) -> str:
        names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in aliases)
        return f"from {source} import {names}"

    relative = "." * node.level + (node.module or "")
    return ([statement(relative, kept)] if kept else []) + [statement(package, moved)]


def rewrite_file(path: Path, plan: Plan) -> str | None:
    """The file's new text, or None when nothing changes."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.ImportFrom):
            new = rewritten(node, path, plan)
            if new is not None:
                edits.append((node, new))
    if not edits:
        return None
    for node, new in sorted(edits, key=lambda e: e[0].lineno, reverse=True):
        end = node.end_lineno or node.lineno
        first, last = lines[node.lineno - 1], lines[end - 1]
        prefix = first[: node.col_offset]
        rest = last.encode()[node.end_col_offset or 0 :].decode()
        indent = prefix if not prefix.strip() else " " * (len(prefix) - len(prefix.lstrip()))
        body = [prefix + new[0]] + [indent + s for s in new[1:]]
        lines[node.lineno - 1 : end] = [line + "\n" for line in body[:-1]] + [body[-1] + rest]
    return "".join(lines)


def add_to_face(face: Face, text: str) -> str:
    """The ``__init__``'s text with the names this run adds to its face."""
    imports = "".join(f"    from {m} import {n} as {n}\n" for n, m in sorted(face.added.items()))
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.If) and faces.is_type_checking(node.test) and node.orelse:
            lines = text.splitlines(keepends=True)
            at = node.body[-1].end_lineno or node.lineno
            return "".join(lines[:at]) + imports + "".join(lines[at:])
    head = "from typing import TYPE_CHECKING\n\nfrom local2.faces import lazy_face\n"
    return add_header(text, tree, head) + FACE_BLOCK.format(imports=imports)


def add_header(text: str, tree: ast.Module, head: str) -> str:
    """``text`` with ``head`` imported after its docstring and ``__future__`` imports."""
    at = 0
    for node in tree.body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (docstring or future):
            break
        at = node.end_lineno or at
    lines = text.splitlines(keepends=True)
    return "".join(lines[:at]).rstrip("\n") + "\n\n" + head + "".join(lines[at:]).rstrip("\n")


def ruff(paths: list[Path]) -> None:
    """Sort the imports of the files touched and format them, as ``make lint`` wants."""
    exe = Path(sys.executable).with_name("ruff")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "ruff"]
    files = [str(p) for p in paths]
    subprocess.run([*command, "check", "--fix", "--select", "I", "-q", *files], cwd=ROOT)
    subprocess.run([*command, "format", "-q", *files], cwd=ROOT, check=True)


def imports_alone(module: str) -> str | None:
    """The error importing ``module`` in a fresh interpreter gives, if any."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], env=env, capture_output=True, text=True
    )
    return done.stderr.strip().splitlines()[-1] if done.returncode else None


def verify(paths: list[Path]) -> list[str]:
    modules = sorted({module_of(p) for p in paths})
    with ThreadPoolExecutor(max_workers=2) as pool:
        errors = list(pool.map(imports_alone, modules))
    return [f"{m}: {e}" for m, e in zip(modules, errors, strict=True) if e]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if needed")
    parser.add_argument("--verify", action="store_true", help="import changed modules afresh")
    args = parser.parse_args()
    plan = Plan()
    new_texts = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        new = rewrite_file(path, plan)
        if new is not None:
            new_texts[path] = new
    for face in plan.faces.values():
        if face.added:
            text = new_texts.get(face.init) or face.init.read_text(encoding="utf-8")
            new_texts[face.init] = add_to_face(face, text)
    changed = sorted(new_texts)
    for line in plan.skipped:
        print(f"left bypassing its face: {line}")
    added = sum(len(f.added) for f in plan.faces.values())
    print(f"{len(changed)} files to rewrite, {added} names added to faces")
    if args.check:
        return 1 if changed else 0
    for path, text in new_texts.items():
        path.write_text(text, encoding="utf-8")
    if changed:
        ruff(changed)
    if args.verify:
        failed = verify(changed)
        print("\n".join(f"does not import alone: {line}" for line in failed) or "all import")
        return 1 if failed else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
