"""Python's cyclic garbage collector, paused while ``local2`` starts.

Importing LangGraph, LangChain, Chroma or Gradio allocates hundreds of thousands of
long-lived objects and almost no garbage, yet the collector scans them again and again as
they arrive: about 15 % of a short command's start-up (``bench/startup.py``). The CLI pauses
it before its imports (:func:`pause`). A short command may end with it paused. A command that
keeps running (``ui``, ``serve``, ``chat``, ``ask``, a research run) calls :func:`resume` once
it is set up, before it serves: the start-up objects are frozen (moved out of the
collector's reach, so no later collection scans them, which also shortens the server's
collections between turns) and the collector runs again. Freezing before enabling, as the
:func:`gc.freeze` documentation does it: enabled first, the next allocation could start a
collection of the whole start-up heap.

No process stays paused by mistake: :func:`pause` starts a timer that resumes after
:data:`SAFETY_S` whatever happens. Imports only the standard library's ``atexit``, ``gc`` and
``threading``: it runs before anything else is imported.
"""

from __future__ import annotations

import atexit
import gc
import threading  # cheap, and needed at once for the safety net

SAFETY_S = 10.0  # longer than any short command's start; read when pause() runs


class _State:
    paused = False
    resumed_by: str | None = None  # who resumed: a command's name, or "safety net"
    timer: threading.Timer | None = None


state = _State()
_lock = threading.Lock()


def pause(safety_s: float | None = None) -> bool:
    """Stop cyclic collection until :func:`resume` (or ``safety_s``, default
    :data:`SAFETY_S`, whichever comes first). False if it was off already: someone else
    turned it off, and it is theirs to turn on."""
    with _lock:
        if not gc.isenabled():
            return False
        gc.disable()
        state.paused, state.resumed_by = True, None
        timer = threading.Timer(SAFETY_S if safety_s is None else safety_s, resume, ("safety net",))
        timer.daemon = True
        state.timer = timer
    timer.start()
    return True


def resume(by: str) -> bool:
    """Freeze what exists now and turn collection back on, if :func:`pause` stopped it.
    ``by`` says who (for the log, and :data:`state`); False when it was not paused."""
    with _lock:
        if not state.paused:
            return False
        if state.timer is not None and state.timer is not threading.current_thread():
            state.timer.cancel()
        state.timer = None
        gc.freeze()
        gc.enable()
        state.paused, state.resumed_by = False, by
    # Frozen objects escape the collection Python runs as it exits, and would be finalised
    # later, with modules half torn down (a llama.cpp model's __del__ then fails): give
    # them back to it first.
    atexit.register(gc.unfreeze)
    import logging  # imported here: pause() runs before anything else is imported

    logging.getLogger(__name__).debug(
        "cyclic gc resumed by %s, %d start-up objects frozen", by, gc.get_freeze_count()
    )
    return True
