"""LoCAL2's errors as HTTP responses, mapped once for every route.

Every error the service raises is a :class:`~local2.errors.Local2Error`; its branch decides
the status. A routine refusal carries its message as ``detail``; a failure with something
to do about it (a model or store that cannot answer) carries ``{"error", "fix"}``; a turn
waiting for the person carries what it waits on and how to resume it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
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


def _waiting(exc: AwaitingApproval) -> PendingApproval:
    return cast(PendingApproval, exc.request)  # what the paused turn waits on, as it was read


def detail_of(exc: Local2Error) -> str | Problem:
    """The response's ``detail`` for ``exc``."""
    if isinstance(exc, AwaitingApproval):
        waiting = _waiting(exc)
        return {"error": str(exc), "approval": waiting, "resume": waiting.get("resume")}
    if isinstance(exc, (Unavailable, ModelError)):
        return {"error": exc.message, "fix": exc.fix}
    return exc.message or str(exc)


def problem(exc: Local2Error) -> Problem:
    """``{error, fix}`` for a stream that has already begun and can only end with a reason."""
    if isinstance(exc, AwaitingApproval):
        return {"error": str(exc), "approval": _waiting(exc), "fix": ""}
    return {"error": exc.message or str(exc), "fix": exc.fix}


STOPPED = (
    "The turn was stopped before its answer (POST /sessions/{id}/stop): nothing was "
    "recorded, and any text streamed for it is abandoned."
)


def stopped() -> Problem:
    """What a request waiting on a turn gets when the turn is stopped."""
    return {"error": STOPPED, "fix": "Ask again to get an answer.", "status": "stopped"}


def stopped_response() -> JSONResponse:
    """``POST /query`` whose turn was stopped: 409, ``detail`` is :func:`stopped`.

    (A Stop is a ``BaseException``, which FastAPI's handlers never see: the route maps it.)"""
    return JSONResponse(status_code=409, content={"detail": stopped()})


async def _local2_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Local2Error)
    return JSONResponse(status_code=status_of(exc), content={"detail": detail_of(exc)})


def invalid_fields(errors: Iterable[Mapping[str, Any]], skip: int = 0) -> str:
    """What a request's fields break, as the API's 422 says it (``field: why; ...``; no
    value given is repeated). ``skip``: the leading parts of each error's location that say
    where the field came from (FastAPI's ``body``, ``query``)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc'][skip:]) or 'body'}: {e['msg']}" for e in errors
    )


async def _invalid_body(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return JSONResponse(status_code=422, content={"detail": invalid_fields(exc.errors(), 1)})


def add_error_handlers(app: FastAPI) -> None:
    """Answer every LoCAL2 error and every invalid body the same way on every route."""
    app.add_exception_handler(Local2Error, _local2_error)
    app.add_exception_handler(RequestValidationError, _invalid_body)
