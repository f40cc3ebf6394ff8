"""Native work in daemon threads, and the interpreter's exit.

At exit CPython ends each daemon thread the moment it next takes the GIL, by unwinding its
stack with ``pthread_exit``. A thread coming back from C++ code then aborts the whole
process: onnxruntime's pybind11 frames cannot be unwound ("terminate called without an
active exception", exit status 134), so a ``local2`` command that failed at once while the
offline embedder was loading in the warm-up thread died with SIGABRT instead of its message
and exit code. Calls into such code run inside :func:`native_call`; at exit the interpreter
waits (a bounded time) for those in flight and lets no new one start, so every daemon thread
is in Python code when it is ended. A native call may hold others (the file index's build
makes a file's Chroma writes and embeddings one step): those inside it go on, as parts of a
call in flight.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from contextlib import contextmanager

EXIT_WAIT_S = 30.0  # the longest native call here: the embedder's ~1 s load, on a busy machine

_gate = threading.Condition()
_in_flight = 0
_exiting = False
_held = threading.local()  # depth: how many native calls this thread is inside


@contextmanager
def native_call() -> Iterator[None]:
    """Run the block's native call; once the interpreter is exiting, a daemon thread waits
    here for ever (it is then ended in Python code, where that is safe). The main thread,
    which does the exiting, never waits."""
    global _in_flight
    main = threading.current_thread() is threading.main_thread()
    depth: int = getattr(_held, "depth", 0)
    with _gate:
        while _exiting and not main and not depth:  # inside a call in flight: part of it
            _gate.wait()
        _in_flight += 1
    _held.depth = depth + 1
    try:
        yield
    finally:
        _held.depth = depth
        with _gate:
            _in_flight -= 1
            _gate.notify_all()


def _close_the_gate() -> None:
    global _exiting
    with _gate:
        _exiting = True
        _gate.wait_for(lambda: _in_flight == 0, EXIT_WAIT_S)


atexit.register(_close_the_gate)
