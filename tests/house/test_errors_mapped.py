"""Every exception class of the package is in the errors tree and every surface maps it.

The classes are found by walking the package (importing each module), so a new error class
anywhere fails here until it joins a branch that ``service/_problems.py`` gives a status,
``cli/_errors.py`` an exit code and ``ui/_notices.py`` a notice.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import local2
from local2.cli._errors import EXIT_CODES, exit_code
from local2.errors import AwaitingApproval, Local2Error, ToolError, TurnCancelled
from local2.service._problems import STATUSES, status_of
from local2.ui._notices import notice_for

# Modules that do work when imported (LangGraph Server's graph is built from settings).
NOT_IMPORTED = {"local2.platform.graph", "local2.cli.__main__"}
# Exceptions that never leave the module that raises them.
INTERNAL = {
    "local2.bounded._workers.OverBudget": "a bounded worker's own timer, caught inside its job",
    "local2.tools._web_fetch._Cancelled": "a cancelled download, turned into a ToolError",
    "local2.tools._file_grep._OutOfTime": "grep's budget spent, turned into a note in its result",
}
# Errors one surface raises for itself, which no other surface can meet.
SURFACE_ONLY = {"local2.ui._sign_in.SignedOut"}


def exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(local2.__path__, "local2."):
        if info.name in NOT_IMPORTED:
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == info.name:
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


CLASSES = exception_classes()
TREE = sorted(
    (name, cls)
    for name, cls in CLASSES.items()
    if issubclass(cls, Local2Error) and cls is not Local2Error and name not in SURFACE_ONLY
)


def test_every_exception_class_is_in_the_tree() -> None:
    assert len(CLASSES) > 30  # the walk found the package's errors
    outside = {
        name
        for name, cls in CLASSES.items()
        if not issubclass(cls, Local2Error | TurnCancelled) and name not in INTERNAL
    }
    assert not outside, f"not under Local2Error: {sorted(outside)}"


@pytest.mark.parametrize(("name", "cls"), TREE, ids=[name for name, _ in TREE])
def test_every_surface_maps_the_error(name: str, cls: type[Local2Error]) -> None:
    # HTTP: a branch with its own status, never the 500 of an unexpected error.
    assert any(issubclass(cls, kind) for kind, _ in STATUSES), f"{name} would reach HTTP as 500"
    error = cls.__new__(cls)
    Local2Error.__init__(error, "what went wrong", "what to do")
    if isinstance(error, ToolError):
        error.events, error.data = [], {}
    assert status_of(error) in {status for _, status in STATUSES}
    # CLI: an exit code (a listed one, or 1 for a failure with nothing to correct).
    assert exit_code(error) in {code for _, code in EXIT_CODES} | {1}
    # The app: a notice that says what went wrong and what to do.
    notice = notice_for(error)
    if isinstance(error, AwaitingApproval):  # the app shows the approval panel instead
        assert notice.text.strip()
    else:
        assert "what went wrong" in notice.text and notice.fix == "what to do"


def test_a_stop_is_mapped_by_every_surface() -> None:
    stop = TurnCancelled("stopped")
    assert exit_code(stop) == 130 and notice_for(stop).kind == "info"
