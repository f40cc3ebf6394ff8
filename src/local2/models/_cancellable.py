"""A model request that another thread can cancel, closing its HTTP connection.

An answered turn's background work (the critic's grade, memory's fact extraction) asks the
same server the person's next question goes to, and Ollama serves requests in order, or side
by side only while the GPU has room: a grade asked first is generated first. To let the
person's question go first, the background request must end, and a sync client cannot be
told so from another thread (its socket is in a blocking read). So the request runs as the
model's *async* call (``ainvoke``) on one event loop of the process's own
(:func:`background_loop`), and cancelling it cancels that task: httpx closes the connection,
which tells Ollama (and the test kit's server, :mod:`local2_testkit.ollama_server`) to stop.
A deadline cancels it the same way, so a late grade also stops generating.

The task starts in an empty context: nothing of the LangGraph run that asked for it (its
callbacks, its stream) reaches the model call, so a judge's tokens never stream as if they
were the answer. A model with no async client of its own (the embedded one, a test's
scripted model) runs in the loop's worker threads: cancelling stops the waiting, not the
thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig

from local2.errors import GaveWay


class Cancellation:
    """Asked once, from any thread: work that watches it gives way (:class:`GaveWay`).

    Callbacks registered with :meth:`on_set` run once, in the thread that calls :meth:`set`
    (or at once, if it was set already)."""

    def __init__(self) -> None:
        self._set = threading.Event()
        self._callbacks: list[Callable[[], object]] = []
        self._guard = threading.Lock()

    def set(self) -> None:
        with self._guard:
            if self._set.is_set():
                return
            self._set.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def is_set(self) -> bool:
        return self._set.is_set()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for it to be set; whether it is."""
        return self._set.wait(timeout)

    def check(self, what: str = "the work") -> None:
        """Raise :class:`GaveWay` if asked to give way."""
        if self._set.is_set():
            raise GaveWay(f"{what} gave way to a new question")

    def on_set(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` when set (now, if it is); returns what unregisters it."""
        with self._guard:
            if not self._set.is_set():
                self._callbacks.append(callback)
                return lambda: self._forget(callback)
        callback()
        return lambda: None

    def _forget(self, callback: Callable[[], object]) -> None:
        with self._guard:
            if callback in self._callbacks:
                self._callbacks.remove(callback)


_loop: asyncio.AbstractEventLoop | None = None
_loop_guard = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """The process's event loop for cancellable requests, started on first use (a daemon
    thread: it never keeps the process alive). One loop for every request, so that an async
    client's pooled connections always belong to the loop that uses them."""
    global _loop
    with _loop_guard:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="local2-requests", daemon=True).start()
            _loop = loop
        return _loop


def submit(coroutine: Callable[[], Coroutine[Any, Any, Any]]) -> concurrent.futures.Future[Any]:
    """Run ``coroutine()`` on :func:`background_loop` in an empty context; cancelling the
    returned future cancels the task."""
    loop = background_loop()
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def start() -> None:  # the future stays pending until done, so that it can be cancelled
        if future.cancelled():
            return
        task = loop.create_task(coroutine())

        def settle(done: asyncio.Task[Any]) -> None:
            if future.done():
                return
            if done.cancelled():
                future.cancel()
            elif (error := done.exception()) is not None:
                future.set_exception(error)
            else:
                future.set_result(done.result())

        task.add_done_callback(settle)
        future.add_done_callback(lambda f: loop.call_soon_threadsafe(task.cancel))

    loop.call_soon_threadsafe(start, context=contextvars.Context())
    return future


async def in_daemon_thread(call: Callable[[], Any]) -> Any:
    """``call()`` in a daemon thread (a hung model never keeps the process alive, as a pool's
    worker would at exit), awaited; it starts with an empty context, like every new thread."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if done.done():  # cancelled meanwhile: nobody waits for it
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    def run() -> None:
        try:
            value, error = call(), None
        except BaseException as exc:  # handed to the awaiting task
            value, error = None, exc
        loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=run, name="local2-model-call", daemon=True).start()
    return await done


def has_async_client(model: Runnable[Any, Any]) -> bool:
    """Whether the model makes its requests itself when called async (ChatOllama, ChatOpenAI),
    rather than LangChain running its sync call in a thread. A model with arguments bound
    (``model.bind(...)``: the eval grader's embedded model, held to a JSON grade) is its
    bound model's kind."""
    while isinstance(model, RunnableBinding):
        model = model.bound
    kind = type(model)
    default = BaseChatModel._agenerate, BaseChatModel._astream
    return (
        getattr(kind, "_agenerate", default[0]) is not default[0]
        or getattr(kind, "_astream", default[1]) is not default[1]
    )


def cancellable_invoke(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    *,
    cancel: Cancellation | None = None,
    timeout_s: float | None = None,
    config: RunnableConfig | None = None,
    **kwargs: Any,
) -> BaseMessage:
    """``model.invoke(messages, config, **kwargs)``, cancellable: :class:`GaveWay` when
    ``cancel`` is set (before or during the request), :class:`TimeoutError` after
    ``timeout_s``; either way the request is cancelled and its connection closed."""
    if cancel is not None:
        cancel.check("the model request")
    asked = list(messages)
    if has_async_client(model):
        future = submit(lambda: model.ainvoke(asked, config, **kwargs))
    else:  # its sync call in a thread of its own, as before: cancelling stops the waiting
        future = submit(lambda: in_daemon_thread(lambda: model.invoke(asked, config, **kwargs)))
    forget = cancel.on_set(future.cancel) if cancel is not None else (lambda: None)
    try:
        reply: BaseMessage = future.result(timeout=timeout_s)
        return reply
    except concurrent.futures.CancelledError:
        raise GaveWay("the model request gave way to a new question") from None
    except TimeoutError:
        if future.done():  # the request's own timeout, not the deadline
            raise
        future.cancel()
        raise TimeoutError(f"no reply within {timeout_s:g}s") from None
    finally:
        forget()
