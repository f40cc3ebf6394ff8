"""The one place errors become what a person reads at a terminal, and an exit code.

Every error LoCAL2 raises is a :class:`~local2.errors.Local2Error` with a message and, where
there is one, a fix; its branch decides the exit code. A file or folder that cannot be used
(``OSError``) is said as such. A one-shot command wraps its work in
:func:`friendly_errors` (print, then exit); ``local2 chat`` calls :func:`report` and goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.markup import escape

from local2.cli._common import err
from local2.errors import (
    Conflict,
    InvalidInput,
    Local2Error,
    NotFound,
    SettingsError,
    StoryError,
    TurnCancelled,
    UnsafeToServe,
)

STOPPED = "Stopped before the answer: nothing was recorded."
# The first branch an error belongs to decides; anything else LoCAL2 raises exits with 1.
EXIT_CODES: tuple[tuple[type[BaseException], int], ...] = (
    (TurnCancelled, 130),
    (UnsafeToServe, 2),
    (InvalidInput, 2),
    (Conflict, 2),
    (StoryError, 2),
    (NotFound, 3),
)


def exit_code(exc: BaseException) -> int:
    return next((code for kind, code in EXIT_CODES if isinstance(exc, kind)), 1)


def report(exc: Local2Error | TurnCancelled, doing: str | None = None) -> None:
    """Print what went wrong (after ``doing``, e.g. "cannot open memory") and the fix."""
    if isinstance(exc, TurnCancelled):
        message, fix = STOPPED, ""
    else:
        message, fix = exc.message or str(exc), exc.fix
        if isinstance(exc, SettingsError) and not isinstance(exc, UnsafeToServe):
            message = f"Configuration error: {message}"
    said = escape(f"{doing}: {message}" if doing else message)  # never read as markup
    err.print(f"[bold red]Error:[/] {said}", highlight=False)
    if fix:
        err.print(f"[yellow]Fix:[/] {escape(fix)}", highlight=False)


@contextmanager
def friendly_errors(doing: str | None = None) -> Iterator[None]:
    """Turn the errors a person can act on into a message and an exit code."""
    try:
        yield
    except (Local2Error, TurnCancelled) as exc:
        report(exc, doing)
        raise typer.Exit(exit_code(exc)) from None
    except OSError as exc:  # a file or folder LoCAL2 was asked to use: say which, not a trace
        where = f" ({exc.filename})" if exc.filename else ""
        report(Local2Error(f"{exc.strerror or exc}{where}"), doing)
        raise typer.Exit(1) from None
