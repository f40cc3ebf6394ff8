"""A package's public face: ``__all__`` says what other packages may use, and each name is
loaded from the module that defines it on first use, so importing the package costs nothing.
``tests/test_architecture.py`` checks that every import across packages names something in
its package's ``__all__``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_face(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """The package's module ``__getattr__``: ``names`` maps a name to its module."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        loaded = importlib.import_module(module)
        return loaded if module == f"{package}.{name}" else getattr(loaded, name)

    return __getattr__
