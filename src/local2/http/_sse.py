"""Server-sent events: one framing for both streams (turns and research).

Each message is ``event: <name>`` and one ``data:`` line of JSON. Both streams end with
``done`` (the final payload), ``error`` (``{error, fix}``), or ``stopped`` (``{error, fix,
status: "stopped"}``: a Stop came before the answer; what streamed is abandoned, nothing was
recorded): a stream already under way cannot change its status, so it ends with a reason
instead of a reset.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from typing import Any

from fastapi.responses import StreamingResponse
from starlette.concurrency import iterate_in_threadpool

from local2.errors import Local2Error, TurnCancelled
from local2.http._errors import stopped
from local2.service import problem

HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}

log = logging.getLogger(__name__)


def frame(name: str, data: Any) -> str:
    """One server-sent event; JSON keeps the data on a single line."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def ending_with_reason(frames: Iterator[str]) -> Generator[str, None, None]:
    """``frames``, ended by an ``error`` event if whatever produces them fails."""
    try:
        yield from frames
    except TurnCancelled:  # POST /sessions/{id}/stop: what streamed is abandoned
        yield frame("stopped", stopped())
    except Local2Error as exc:
        yield frame("error", problem(exc))
    except Exception as exc:
        yield frame("error", {"error": f"the run failed ({type(exc).__name__})", "fix": ""})


def event_stream(frames: Iterator[str]) -> StreamingResponse:
    """The response that sends ``frames`` as they come."""
    return StreamingResponse(
        ending_with_reason(frames), media_type="text/event-stream", headers=HEADERS
    )


def closed_when_gone(
    frames: Iterator[str], gone: Callable[[], None] | None = None
) -> StreamingResponse:
    """:func:`event_stream` for a run that holds itself (a claim, a lock, a status): when
    the client goes away first, ``gone`` is called and the stream is closed at once, off the
    event loop (closing settles the run, which may wait for work in flight). Left to the
    garbage collector, the run stayed claimed, ``running``, for as long as it took to find
    the abandoned generators: past a minute in a long-lived process."""
    stream = ending_with_reason(frames)

    async def body() -> AsyncIterator[str]:
        finished = False
        try:
            async for chunk in iterate_in_threadpool(stream):
                yield chunk
            finished = True
        finally:
            if not finished:
                if gone is not None:
                    gone()
                threading.Thread(
                    target=_close_quietly, args=(stream,), name="local2-stream-gone", daemon=True
                ).start()

    return StreamingResponse(body(), media_type="text/event-stream", headers=HEADERS)


def closing(items: Iterator[Any]) -> None:
    """Close ``items`` if it is a generator: what a frames generator does when it is closed,
    so the run under it settles with it."""
    close = getattr(items, "close", None)
    if close is not None:
        close()


def _close_quietly(stream: Generator[str, None, None]) -> None:
    try:
        stream.close()
    except Exception:  # logged: nobody is left to tell
        log.exception("a stream whose client went away did not close cleanly")
