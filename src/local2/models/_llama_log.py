"""llama.cpp's log goes to Python's logging; the terminal is never taken away.

llama-cpp-python hides llama.cpp's loading chatter (built with ``verbose=False``) by pointing
file descriptors 1 and 2 at /dev/null while a model loads (``suppress_stdout_stderr``).
That is process-wide: whatever any other thread prints meanwhile is lost. The CLI prints its
notices ("Using the embedded demo model…") while the warm-up thread loads the model, so
they never arrived; a streamed token or a ``--json`` payload could have gone the same way.

So the redirection is switched off, and the chatter, which llama.cpp writes through its log
callback, goes to the ``local2.llama`` logger instead (debug and info hidden by default,
warnings and errors shown as any other). ``verbose`` stays False: with it,
llama-cpp-python would also print the model's metadata and the CPU's features to stderr
itself, from Python, on every load.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from contextlib import nullcontext
from typing import Any

logger = logging.getLogger("local2.llama")

# ggml's log levels (ggml.h: NONE, DEBUG, INFO, WARN, ERROR, CONT).
LEVELS = {0: logging.INFO, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR}
CONTINUED = 5  # the rest of the previous message

_installed = threading.Lock()
_callback: Any = None  # kept alive: llama.cpp holds only the C pointer
_last_level = logging.DEBUG


class _LeaveOutputAlone(nullcontext[None]):
    """``suppress_stdout_stderr`` that suppresses nothing."""

    def __init__(self, disable: bool = True) -> None:
        super().__init__()


def _log(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
    global _last_level
    _last_level = _last_level if level == CONTINUED else LEVELS.get(level, logging.INFO)
    if logger.isEnabledFor(_last_level):
        message = text.decode("utf-8", errors="replace").rstrip("\n")
        if message:
            logger.log(_last_level, "%s", message)


def route_llama_log() -> None:
    """Send llama.cpp's log to ``local2.llama`` and stop llama-cpp-python from redirecting
    the process's stdout and stderr; once per process, before the first model loads."""
    global _callback
    with _installed:
        if _callback is not None:
            return
        # llama_cpp: 169 modules at import; only once the embedded model loads
        import llama_cpp

        # lazy: llama_cpp, numpy: ~122 ms, 181 modules at import
        import llama_cpp._internals
        import llama_cpp.llama

        for module in (llama_cpp.llama, llama_cpp._internals):
            if hasattr(module, "suppress_stdout_stderr"):
                module.suppress_stdout_stderr = _LeaveOutputAlone  # type: ignore[attr-defined]  # llama-cpp-python's private helper, replaced while it loads
        _callback = llama_cpp.llama_log_callback(_log)
        llama_cpp.llama_log_set(_callback, ctypes.c_void_p(0))
