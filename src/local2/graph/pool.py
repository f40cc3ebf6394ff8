"""One long-lived thread pool for LangGraph's background work in this process.

LangGraph's sync loop asks langchain-core for a thread pool per graph run
(``get_executor_for_config``), in which it writes checkpoints and runs parallel nodes. A new
pool starts new threads: a chat turn started 4-6 of them, and each start is waited for by the
step that submits work, on the path to the answer (``bench/overhead.py``). :func:`install`
hands LangGraph one pool that lives as long as the process, so a turn reuses idle threads.

LangGraph waits for its own tasks when a run ends (it never relies on the pool shutting
down), so sharing the pool changes nothing else. A run whose config sets
``max_concurrency`` keeps a bounded pool of its own, as before. The pool's size bound is only
a ceiling: threads start when no idle one is free, so it is generous, because runs can wait
on each other's tasks (a compare turn's respondents are subgraphs run as tasks).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables.config import ContextThreadPoolExecutor, get_executor_for_config

log = logging.getLogger(__name__)

MAX_THREADS = 128  # a ceiling for every run at once; threads start only when none is idle

_pool: ContextThreadPoolExecutor | None = None
_guard = threading.Lock()


def shared_pool() -> ContextThreadPoolExecutor:
    """The process's pool (made on first use)."""
    global _pool
    with _guard:
        if _pool is None:
            _pool = ContextThreadPoolExecutor(
                max_workers=MAX_THREADS, thread_name_prefix="local2-graph"
            )
        return _pool


@contextmanager
def executor_for_config(config: Any) -> Iterator[Executor]:
    """langchain-core's ``get_executor_for_config``, with the shared pool unless the run
    bounds its own concurrency. The shared pool is not shut down when the run ends."""
    if (config or {}).get("max_concurrency") is not None:
        with get_executor_for_config(config) as bounded:
            yield bounded
        return
    yield shared_pool()


def install() -> bool:
    """Have LangGraph's runs use :func:`executor_for_config`; False if LangGraph no longer
    has the hook (then each run makes its own pool, as LangGraph does by default)."""
    try:
        from langgraph.pregel import _executor
    except ImportError:
        return False
    current = getattr(_executor, "get_executor_for_config", None)
    if current is executor_for_config:
        return True
    if current is not get_executor_for_config:
        log.debug("LangGraph's executor hook has changed; runs keep their own pools")
        return False
    # LangGraph's private hook: its module imports the name without re-exporting it
    _executor.get_executor_for_config = executor_for_config  # type: ignore[attr-defined]
    return True
