"""What a refusal says on every surface, mapped once: the status of an error's branch, the
``{error, fix}`` a stream or a tool result ends with, a request's invalid fields in words.

The HTTP API answers with these (``local2.http``: a route's status and ``detail``, a
stream's last event) and the MCP server says the same words and status in a tool's error
result: one mapping below both surfaces, so neither leans on the other. No web framework
here: ``local2 mcp`` lists its tools without importing FastAPI.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from typing_extensions import TypedDict

from local2.contracts import PendingApproval
from local2.errors import (
    AwaitingApproval,
    Conflict,
    DocumentTooLarge,
    InvalidInput,
    Local2Error,
    ModelError,
    ModelUnavailable,
    NotFound,
    SettingsError,
    StorageFull,
    StoryError,
    ToolError,
    Unavailable,
)

# The first branch an error belongs to gives its status (more specific branches first).
STATUSES: tuple[tuple[type[Local2Error], int], ...] = (
    (StorageFull, 507),
    (ModelUnavailable, 503),
    (ModelError, 502),
    (DocumentTooLarge, 413),
    (InvalidInput, 422),
    (NotFound, 404),
    (Conflict, 409),
    (Unavailable, 503),
    (ToolError, 502),  # a tool's failure is the model's to read: one reaching a route is a bug
    (StoryError, 422),
    (SettingsError, 500),  # the server's own settings: its log and the message say which
)


def status_of(exc: Local2Error) -> int:
    """The HTTP status for ``exc`` (500 for a branch no surface expects)."""
    return next((status for kind, status in STATUSES if isinstance(exc, kind)), 500)


class Problem(TypedDict, total=False):
    """What went wrong, as a response's ``detail`` or a stream's last event says it: the
    error and its fix, or the approval a turn waits for (``status``: stopped)."""

    error: str
    fix: str
    approval: PendingApproval
    resume: str | None
    status: str


def problem(exc: Local2Error) -> Problem:
    """``{error, fix}`` for a stream that has already begun and can only end with a reason."""
    if isinstance(exc, AwaitingApproval):
        return {"error": str(exc), "approval": cast(PendingApproval, exc.request), "fix": ""}
    return {"error": exc.message or str(exc), "fix": exc.fix}


def invalid_fields(errors: Iterable[Mapping[str, Any]], skip: int = 0) -> str:
    """What a request's fields break, as the API's 422 says it (``field: why; ...``; no
    value given is repeated). ``skip``: the leading parts of each error's location that say
    where the field came from (FastAPI's ``body``, ``query``)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc'][skip:]) or 'body'}: {e['msg']}" for e in errors
    )
