"""Heavy first-use work done in the background while LoCAL2 starts or the person types.

The embedded model reads a ~330-token system prompt and tool list before its first word
(about 4 CPU seconds on a small machine) and the offline MiniLM loads 90 MB of weights. Both
are the same every time, so a daemon thread does them while the main thread is still
importing the graph and the memory store, or while ``chat`` and the app wait for a question.
A warm-up that fails changes nothing: the same work then happens on first use, as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from local2.graph import Services

log = logging.getLogger(__name__)


class Warmup:
    """Runs tasks one after another in one daemon thread.

    ``paused`` holds the tasks until :meth:`start`: the app starts them once its page can be
    served, so that on a small machine they do not compete with the start-up itself.
    """

    def __init__(self, paused: bool = False) -> None:
        self._tasks: list[tuple[str, Callable[[], Any]]] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._paused = paused

    def add(self, name: str, task: Callable[[], Any]) -> None:
        with self._lock:
            self._tasks.append((name, task))
        self._wake()

    def start(self) -> None:
        """Run the tasks held so far, and later ones as they are added."""
        with self._lock:
            self._paused = False
        self._wake()

    def _wake(self) -> None:
        with self._lock:
            idle = self._thread is None or not self._thread.is_alive()
            if self._tasks and not self._paused and idle:
                self._thread = threading.Thread(target=self._run, name="local2-warmup", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._tasks:
                    self._thread = None
                    return
                name, task = self._tasks.pop(0)
            try:
                task()
            except Exception as exc:  # first use will do it again, and report any problem
                log.info("warm-up of %s skipped: %s: %s", name, type(exc).__name__, exc)

    def join(self, timeout: float | None = None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)


def prefix_state_dir(settings: Any) -> Path:
    """Where the embedded model keeps its state after the fixed prompt start (a cache:
    deleting it costs the next start ~3 s, nothing else)."""
    return Path(settings.data_dir) / "cache" / "prompt-state"


def prompt_prefix_task(
    settings: Any, chat_model: Any, backend: str | None = None
) -> Callable[[], str] | None:
    """Reading the fixed prompt start, for a chat model that can (the embedded one)."""
    warm_up = getattr(chat_model, "warm_up", None)
    if warm_up is None:
        return None

    def task() -> str:
        # lazy: pydantic, pydantic_core, local2.config: ~149 ms, 154 modules at import
        from local2.tools import default_tools

        with chat_model.warming_up():  # a question asked meanwhile waits for this
            # The tools the agent will offer, as the generate node binds them; a memory
            # tool only needs its store when called, so any object stands in for it here.
            memory = object() if settings.memory.enabled else None
            tools = default_tools(settings, memory, backend, mcp=False)
            how = warm_up(
                settings.generator.system_prompt,
                [t.schema() for t in tools],
                state_dir=prefix_state_dir(settings),
            )
        log.info("warm-up: prompt prefix %s", how)
        return str(how)

    return task


def embedder_task(memory: Any) -> Callable[[], None] | None:
    """Loading the memory's offline embedding model (only MiniLM has weights to load)."""
    embedder = getattr(memory, "embedder", None)
    if embedder is None or not hasattr(embedder, "model_path"):
        return None
    return lambda: embedder.model


def first_turn(services: Services) -> None:
    """Do a first turn's one-time work before the first question, for a server that has
    just started: memory's client and index, the tool schemas bound to the model, the reply
    checks' patterns compiled. A first turn took ~100 ms more than later ones without it
    (``bench/overhead.py``). Writes nothing; a failure is only logged."""
    # lazy: langgraph, langchain_core, local2.contracts: ~1.0 s, 1195 modules at import
    from local2.graph import unusable_reason, without_listing_lines

    try:
        schemas = {name: tool.parameters for name, tool in services.tools.items()}
        if schemas and services.native_tools:
            services.chat_model.bind_tools([t.schema() for t in services.tools.values()])
        sample = "Warming up."
        unusable_reason(sample, schemas)
        without_listing_lines(sample)
        if services.tool_parser is not None:
            services.tool_parser(sample, schemas)
        if services.memory is not None and hasattr(services.memory, "warm_up"):
            services.memory.warm_up()
    except Exception as exc:  # the first turn does the same work, and reports problems
        log.warning("warm-up failed: %s: %s", type(exc).__name__, exc)
