"""Runs tool calls concurrently so ``dispatch_tool`` can start them and ``await_tool`` collect.

Futures cannot live in a checkpoint, so they are kept here, keyed by query and call id. When a
run resumes at ``await_tool`` from a checkpoint (replay), the future is gone and the call is
simply started again.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from local2.tools.base import Tool, ToolContext, ToolResult, as_result


@dataclass
class Started:
    future: Future[ToolResult]
    started_at: float


class ToolRunner:
    """A thread pool for tool calls; a call that times out is abandoned, not killed."""

    def __init__(self, max_workers: int = 8) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="local2-tool")
        self._started: dict[tuple[str, str], Started] = {}
        self._lock = threading.Lock()

    def start(self, tool: Tool, args: dict[str, Any], ctx: ToolContext, call_id: str) -> Started:
        started = Started(self._pool.submit(lambda: as_result(tool.run(args, ctx))), time.time())
        with self._lock:
            self._started[(ctx.query_id, call_id)] = started
        return started

    def take(self, query_id: str, call_id: str) -> Started | None:
        with self._lock:
            return self._started.pop((query_id, call_id), None)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
