"""LoCAL2's errors as HTTP responses, mapped once for every route.

Every error the service raises is a :class:`~local2.errors.Local2Error`; its branch decides
the status (the service's one mapping, ``status_of``, which the MCP server says too). A
routine refusal carries its message as ``detail``; a failure with something to do about it
(a model or store that cannot answer) carries ``{"error", "fix"}``; a turn waiting for the
person carries what it waits on and how to resume it.
"""

from __future__ import annotations

from typing import cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from local2.contracts import PendingApproval
from local2.errors import AwaitingApproval, Local2Error, ModelError, Unavailable
from local2.service import Problem, invalid_fields, status_of


def detail_of(exc: Local2Error) -> str | Problem:
    """The response's ``detail`` for ``exc``."""
    if isinstance(exc, AwaitingApproval):
        waiting = cast(PendingApproval, exc.request)  # what the paused turn waits on
        return {"error": str(exc), "approval": waiting, "resume": waiting.get("resume")}
    if isinstance(exc, (Unavailable, ModelError)):
        return {"error": exc.message, "fix": exc.fix}
    return exc.message or str(exc)


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


async def _invalid_body(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return JSONResponse(status_code=422, content={"detail": invalid_fields(exc.errors(), 1)})


def add_error_handlers(app: FastAPI) -> None:
    """Answer every LoCAL2 error and every invalid body the same way on every route."""
    app.add_exception_handler(Local2Error, _local2_error)
    app.add_exception_handler(RequestValidationError, _invalid_body)
