"""A package's public face, written once: the explicit re-exports under ``if TYPE_CHECKING:``
in its ``__init__`` (``from local2.tools.web import web_tools as web_tools``). mypy reads
them as the real types; at run time :func:`lazy_face` reads that block (the ``__init__``'s
own source, parsed once) and loads each name from its module on first use, so importing a
package costs nothing. The face's ``__all__`` is the block's names and whatever public the
``__init__`` defines or re-exports itself. ``tests/test_architecture.py`` holds every import
across packages to a face.

An ``__init__`` ends with::

    if TYPE_CHECKING:
        from local2.tools.web import web_tools as web_tools
    else:
        __getattr__ = lazy_face(__name__, __file__)
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ast


def is_type_checking(test: ast.expr) -> bool:
    name = getattr(test, "id", None) or getattr(test, "attr", None)
    return name == "TYPE_CHECKING"


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module an ``ImportFrom`` in ``package``'s ``__init__`` names (relative ones too)."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _reexports(statements: list[ast.stmt], package: str) -> dict[str, str]:
    """``from m import n as n`` (an explicit re-export): name -> module."""
    import ast

    found: dict[str, str] = {}
    for node in statements:
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node, package)
            found |= {a.name: module for a in node.names if a.asname == a.name}
    return found


@functools.cache
def face(package: str, init_file: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """The face of ``package`` read from its ``__init__``: the lazily loaded names (name ->
    module, from the ``TYPE_CHECKING`` block) and ``__all__`` (those, and the public names
    the ``__init__`` re-exports or defines at run time)."""
    import ast  # here, not above: importing a package parses nothing

    with open(init_file, encoding="utf-8") as source:
        tree = ast.parse(source.read(), init_file)
    lazy: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and is_type_checking(node.test):
            lazy |= _reexports(node.body, package)
    eager = set(_reexports(tree.body, package))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            eager.add(node.name)
    public = {name for name in eager | set(lazy) if not name.startswith("_")}
    return lazy, tuple(sorted(public))


def load(package: str, module: str, name: str) -> object:
    """``name`` from ``module``: an attribute, or a submodule (``from local2.service import
    wiring as wiring`` names the package's own submodule). A module already imported is
    taken from ``sys.modules``: a face import inside a function costs a lookup. One that
    another thread is still importing (the warm-up thread) is waited for, as ``import``
    waits: its names are not all there yet."""
    if module == package:
        module, name = f"{package}.{name}", ""
    loaded = sys.modules.get(module)
    if loaded is None or getattr(getattr(loaded, "__spec__", None), "_initializing", False):
        loaded = importlib.import_module(module)
    if not name:
        return loaded
    try:
        return getattr(loaded, name)
    except AttributeError:
        return importlib.import_module(f"{module}.{name}")


def lazy_face(package: str, init_file: str) -> Callable[[str], object]:
    """The package's module ``__getattr__``: each name of its face loaded on first use, and
    ``__all__``. Nothing is cached in the package: a name is looked up in its module each
    time, so a test that replaces it there is seen through the face too."""

    def __getattr__(name: str) -> object:
        names, public = face(package, init_file)
        module = names.get(name)
        if module is not None:
            return load(package, module, name)
        if name == "__all__":
            return list(public)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
