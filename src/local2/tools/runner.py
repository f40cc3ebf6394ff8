"""Runs tool calls concurrently so ``dispatch_tool`` can start them and ``await_tool`` collect.

Futures cannot live in a checkpoint, so they are kept here, keyed by query and call id. When a
run resumes at ``await_tool`` from a checkpoint (replay), the future is gone and the call is
simply started again.

A thread cannot be killed, so a call that times out is stopped cooperatively: each call gets
its own ``ToolContext.cancel`` event, :meth:`ToolRunner.stop` sets it and waits a grace
period for the call to end. ``web_fetch`` watches it (download cancelled, extraction worker
killed); a tool that ignores it is reported as not stopped.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Any

from local2.tools.base import Tool, ToolContext, ToolResult, as_result

STOP_GRACE_S = 2.0  # how long a cancelled call may take to wind down


@dataclass
class Started:
    future: Future[ToolResult]
    started_at: float
    cancel: threading.Event


class ToolRunner:
    """A thread pool for tool calls; a call that times out is cancelled and waited for."""

    def __init__(self, max_workers: int = 8) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="local2-tool")
        self._started: dict[tuple[str, str], Started] = {}
        self._lock = threading.Lock()

    # args: the call's arguments as the model (or a research plan) wrote them (JSON)
    def start(self, tool: Tool, args: dict[str, Any], ctx: ToolContext, call_id: str) -> Started:
        cancel = threading.Event()
        call_ctx = replace(ctx, cancel=cancel)
        future = self._pool.submit(lambda: as_result(tool.run(args, call_ctx)))
        started = Started(future, time.time(), cancel)
        with self._lock:
            self._started[(ctx.query_id, call_id)] = started
        return started

    def take(self, query_id: str, call_id: str) -> Started | None:
        with self._lock:
            return self._started.pop((query_id, call_id), None)

    @staticmethod
    def stop(calls: list[Started], grace_s: float = STOP_GRACE_S) -> list[bool]:
        """Cancel ``calls`` and wait up to ``grace_s`` for them; for each, whether it ended."""
        for started in calls:
            started.cancel.set()
            started.future.cancel()  # one still queued never starts
        wait([s.future for s in calls], timeout=grace_s)
        return [s.future.done() for s in calls]

    def shutdown(self) -> None:
        with self._lock:
            pending, self._started = list(self._started.values()), {}
        for started in pending:
            started.cancel.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
