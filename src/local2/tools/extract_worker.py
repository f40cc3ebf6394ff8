"""Page text made in a child process with memory and CPU limits, stopped at the deadline.

Extracting a hostile page in the server took tens of seconds and hundreds of MB (140k
``<span>``s, 2 MB of ``<p>``), and a thread cannot be stopped. So the downloaded bytes go
to a worker process (``python -m local2.tools.extract_worker``) that decodes, extracts,
cleans and picks the passages to show, and sends back only that text. The worker limits
its own address space (``RLIMIT_AS``) and, per page, its CPU time (``RLIMIT_CPU``, which
also ends it if the server dies mid-page); a timer moves a slow trafilatura run to the
linear fallback; and the server kills it at the fetch's deadline or when the tool call is
cancelled. Idle workers are kept warm (starting one imports trafilatura: ~0.75 s), one is
started when a fetch begins so its start overlaps the download, and an idle worker exits
when the server does (its stdin closes).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from local2.errors import ExtractionCancelled, ExtractionFailed, ExtractionTimeout
from local2.tools.extract import (
    MAX_ELEMENTS,
    clean_text,
    decode_body,
    extract_page,
    fast_text,
)
from local2.tools.passages import focus

EMPTY_TEXT = "(no readable text found on this page)"
MAX_IDLE = 2
_POLL_S = 0.05


class _OverBudget(BaseException):
    """Raised inside trafilatura by the worker's timer.

    A BaseException, because trafilatura catches ``Exception`` and would swallow it.
    """


# ------------------------------------------------------------------------------------ the job


def page_job(
    header: Mapping[str, Any],
    body: bytes,
    limit: Callable[[float], AbstractContextManager[object]] | None = None,
) -> dict[str, Any]:
    """Decode, extract, clean and focus one page: the reply the worker sends back.

    ``limit(seconds)`` bounds the trafilatura run (the worker's timer raising
    :class:`_OverBudget`); in-process callers (benchmarks) pass nothing.
    """
    kind = header.get("kind", "html")
    decoded = decode_body(body, header.get("charset"), kind == "html")
    method = "text"
    if kind == "html":
        guard = limit(float(header["extract_s"])) if limit and header.get("extract_s") else None
        try:
            with guard or contextlib.nullcontext():
                raw, method = extract_page(
                    decoded,
                    header.get("url"),
                    header.get("favor", "precision"),
                    int(header.get("max_elements", MAX_ELEMENTS)),
                )
        except _OverBudget:
            raw, method = fast_text(decoded), "fast: extraction over its time budget"
    else:
        raw = decoded
    text = clean_text(raw).strip()
    shown = focus(text, str(header.get("question", "")), int(header["budget_chars"]))
    return {
        "ok": True,
        "text": shown.text or EMPTY_TEXT,
        "chars": shown.chars_total,
        "chars_shown": shown.chars_shown,
        "passages_shown": shown.passages_shown,
        "passages_total": shown.passages_total,
        "method": method,
        "recycle": method.endswith("time budget"),  # trafilatura was interrupted mid-way
    }


# ----------------------------------------------------------------------------- the worker side


def _on_alarm(signum: int, frame: object) -> None:
    raise _OverBudget


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _limit_cpu(seconds: float) -> None:
    """Allow this page ``seconds`` of CPU on top of what the worker has used so far."""
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime + seconds) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def serve(memory_mb: int) -> None:
    """The worker's loop: one JSON header line plus body bytes in, one JSON line out."""
    import resource

    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    signal.signal(signal.SIGALRM, _on_alarm)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a library's stray print must not corrupt the replies
    import trafilatura  # noqa: F401  (paid once, before the first page)

    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            return
        header = json.loads(line)
        body = stdin.read(int(header["length"]))
        _limit_cpu(float(header.get("cpu_s", 60)))
        try:
            reply = page_job(header, body, _alarm)
        except MemoryError:
            reply = {
                "ok": False,
                "error": f"the page needs more than the {memory_mb} MB extraction may use",
                "recycle": True,
            }
        except _OverBudget:  # the timer fired just outside trafilatura
            reply = {"ok": False, "error": "extraction ran out of time", "recycle": True}
        out.write(json.dumps(reply).encode("ascii") + b"\n")
        out.flush()
        if reply.get("recycle"):
            return


# ----------------------------------------------------------------------------- the server side


@dataclass(eq=False)
class _Worker:
    proc: subprocess.Popen[bytes]
    memory_mb: int

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for pipe in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()


def _died(worker: _Worker) -> ExtractionFailed:
    code = worker.proc.wait()
    why = {
        -signal.SIGXCPU: "CPU-time limit reached",
        -signal.SIGKILL: "killed",
        -signal.SIGSEGV: "crashed",
    }.get(code, f"exit status {code}")
    return ExtractionFailed(f"page extraction stopped ({why})")


def _check(deadline: float, cancel: threading.Event | None) -> float:
    if cancel is not None and cancel.is_set():
        raise ExtractionCancelled
    left = deadline - time.monotonic()
    if left <= 0:
        raise ExtractionTimeout
    return left


class WorkerPool:
    """Warm extraction workers, handed to one page at a time."""

    def __init__(self, max_idle: int = MAX_IDLE) -> None:
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._lock = threading.Lock()
        self._max_idle = max_idle
        self.spawned = 0

    def _spawn(self, memory_mb: int) -> _Worker:
        proc = subprocess.Popen(
            [sys.executable, "-m", "local2.tools.extract_worker", str(memory_mb)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
        self.spawned += 1
        return _Worker(proc, memory_mb)

    def prepare(self, memory_mb: int) -> None:
        """Start a worker now (without waiting for it) unless one is idle."""
        with self._lock:
            for worker in [w for w in self._idle if not w.alive()]:
                self._idle.remove(worker)
                worker.kill()
            if not any(w.memory_mb == memory_mb for w in self._idle):
                self._idle.append(self._spawn(memory_mb))

    def _take(self, memory_mb: int) -> _Worker:
        with self._lock:
            for worker in list(self._idle):
                self._idle.remove(worker)
                if worker.memory_mb == memory_mb and worker.alive():
                    self._busy.add(worker)
                    return worker
                worker.kill()
            worker = self._spawn(memory_mb)
            self._busy.add(worker)
            return worker

    def busy_pids(self) -> list[int]:
        """Process ids of the workers extracting a page right now."""
        with self._lock:
            return [w.proc.pid for w in self._busy]

    def idle_pids(self) -> list[int]:
        """Process ids of the warm workers waiting for a page."""
        with self._lock:
            return [w.proc.pid for w in self._idle]

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
            if len(self._idle) < self._max_idle:
                self._idle.append(worker)
                return
        worker.kill()

    def run(
        self,
        header: Mapping[str, Any],
        body: bytes,
        memory_mb: int,
        deadline: float,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        """The worker's reply for one page; raise when it fails, times out or is cancelled."""
        worker = self._take(memory_mb)
        keep = False
        try:
            request = json.dumps({**header, "length": len(body)}).encode() + b"\n" + body
            _send(worker, request, deadline, cancel)
            reply = json.loads(_receive(worker, deadline, cancel))
            keep = not reply.get("recycle")
            if not reply.get("ok"):
                raise ExtractionFailed(str(reply.get("error", "page extraction failed")))
            return reply
        finally:
            if keep:
                self._give_back(worker)
            else:
                worker.kill()
                with self._lock:
                    self._busy.discard(worker)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


def _send(worker: _Worker, data: bytes, deadline: float, cancel: threading.Event | None) -> None:
    assert worker.proc.stdin is not None
    fd = worker.proc.stdin.fileno()
    os.set_blocking(fd, False)
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    view = memoryview(data)
    while view:
        left = _check(deadline, cancel)
        if not poller.poll(min(left, _POLL_S) * 1000):
            continue
        try:
            sent = os.write(fd, view[: 1 << 16])
        except BlockingIOError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            raise _died(worker) from None
        view = view[sent:]


def _receive(worker: _Worker, deadline: float, cancel: threading.Event | None) -> bytes:
    assert worker.proc.stdout is not None
    fd = worker.proc.stdout.fileno()
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    reply = bytearray()
    while not reply.endswith(b"\n"):
        left = _check(deadline, cancel)
        if not poller.poll(min(left, _POLL_S) * 1000):
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise _died(worker)
        reply += chunk
    return bytes(reply)


POOL = WorkerPool()
atexit.register(POOL.close)


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 768)
