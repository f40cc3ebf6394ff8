"""Server-sent events: one framing for both streams (turns and research).

Each message is ``event: <name>`` and one ``data:`` line of JSON. Both streams end with
``done`` (the final payload), ``error`` (``{error, fix}``), or ``stopped`` (``{error, fix,
status: "stopped"}``: a Stop came before the answer; what streamed is abandoned, nothing was
recorded): a stream already under way cannot change its status, so it ends with a reason
instead of a reset.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from typing import Any

from fastapi.responses import StreamingResponse

from local2.errors import Local2Error, TurnCancelled
from local2.http.errors import problem, stopped

HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


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
