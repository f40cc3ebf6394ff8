"""Work on untrusted bytes in a bounded child process: the server's side and the worker's.

The server's side: warm bounded workers, handed one job at a time, killed at the deadline.

A worker is ``python -m <entry> <memory_mb>``, an entry module that runs
:func:`local2.bounded._workers.serve` with its job. Idle workers are kept warm (starting one
imports its libraries), one can be started ahead of a job (:meth:`WorkerPool.prepare`) so
its start overlaps a download, and an idle worker exits when the server does (its stdin
closes). A worker is killed when the job's deadline passes or the caller cancels; its peak
memory, sampled while the server waits, goes with the error when it dies.

The worker's side: one job at a time, within limits the server cannot take back.

Extracting a hostile page in the server took tens of seconds and hundreds of MB, and a
thread cannot be stopped; a PDF stream that inflates to gigabytes took 3 GB here. So the
bytes go to a child process that limits its own address space (``RLIMIT_AS``: at start,
and per job ``headroom_mb`` above what it already uses) and, per job, its CPU time
(``RLIMIT_CPU``, which also ends it if the server dies mid-job). The server kills it at the
job's deadline (:class:`WorkerPool`, above). A job is a function of the JSON header and the
body bytes returning a JSON-able reply; a reply with ``recycle`` ends the worker after it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local2.errors import ExtractionCancelled, ExtractionFailed, ExtractionTimeout

MAX_IDLE = 2
_POLL_S = 0.05
_SAMPLE_S = 0.01  # how often a running job's peak memory is read


@dataclass(eq=False)
class _Worker:
    proc: subprocess.Popen[bytes]
    memory_mb: int
    peak_rss_mb: float = 0.0  # the job's peak so far, sampled while waiting for its reply

    def alive(self) -> bool:
        return self.proc.poll() is None

    def sample_peak(self) -> None:
        """Read the worker's peak resident memory (``VmHWM``, reset by it at each job start).

        Sampled rather than taken from ``wait4``: a child's ``ru_maxrss`` counts the memory
        its parent had when it was forked, so a big server would hide a small worker. A
        sample read before the worker resets it holds the last job's peak: an overestimate.
        """
        self.peak_rss_mb = max(self.peak_rss_mb, status_mb("VmHWM", self.proc.pid))

    def reap(self) -> int:
        """Wait for the process to end; its exit code."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        return self.proc.returncode if self.proc.returncode is not None else -1

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.reap()
        for pipe in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()


_STOPPED_BY = {
    -signal.SIGXCPU: ("cpu", "CPU-time limit reached"),
    -signal.SIGKILL: ("killed", "killed"),
    -signal.SIGABRT: ("memory", "out of memory or crashed"),
    -signal.SIGSEGV: ("crashed", "crashed"),
}


def _died(worker: _Worker, what: str) -> ExtractionFailed:
    code = worker.reap()
    reason, why = _STOPPED_BY.get(code, ("crashed", f"exit status {code}"))
    peak = worker.peak_rss_mb
    return ExtractionFailed(f"{what} stopped ({why})", reason=reason, peak_rss_mb=peak)


def _check(deadline: float, cancel: threading.Event | None) -> float:
    if cancel is not None and cancel.is_set():
        raise ExtractionCancelled
    left = deadline - time.monotonic()
    if left <= 0:
        raise ExtractionTimeout
    return left


class WorkerPool:
    """Warm workers of one entry module, handed to one job at a time.

    ``what`` names the work in errors ("page extraction stopped (CPU-time limit reached)").
    """

    def __init__(self, entry: str, what: str, max_idle: int = MAX_IDLE) -> None:
        self.entry = entry
        self.what = what
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._lock = threading.Lock()
        self._max_idle = max_idle
        self.spawned = 0

    def _spawn(self, memory_mb: int) -> _Worker:
        proc = subprocess.Popen(
            [sys.executable, "-m", self.entry, str(memory_mb)],
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
        """Process ids of the workers doing a job right now."""
        with self._lock:
            return [w.proc.pid for w in self._busy]

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
    ) -> dict[str, Any]:  # the worker's JSON reply, in the keys of its job
        """The worker's reply for one job; raise when it fails, times out or is cancelled."""
        worker = self._take(memory_mb)
        worker.peak_rss_mb = 0.0
        keep = False
        try:
            request = json.dumps({**header, "length": len(body)}).encode() + b"\n" + body
            _send(worker, request, deadline, cancel, self.what)
            # JSON from the worker process
            reply: dict[str, Any] = json.loads(_receive(worker, deadline, cancel, self.what))
            keep = not reply.get("recycle")
            if not reply.get("ok"):
                raise ExtractionFailed(
                    str(reply.get("error", f"{self.what} failed")),
                    reason=str(reply.get("reason", "error")),
                    peak_rss_mb=float(reply.get("rss_peak_mb", 0.0)),
                    fix=str(reply.get("fix", "")),
                )
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


def _send(
    worker: _Worker, data: bytes, deadline: float, cancel: threading.Event | None, what: str
) -> None:
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
            raise _died(worker, what) from None
        view = view[sent:]


def _receive(worker: _Worker, deadline: float, cancel: threading.Event | None, what: str) -> bytes:
    assert worker.proc.stdout is not None
    fd = worker.proc.stdout.fileno()
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    reply = bytearray()
    while not reply.endswith(b"\n"):
        left = _check(deadline, cancel)
        ready = poller.poll(min(left, _SAMPLE_S) * 1000)
        worker.sample_peak()
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise _died(worker, what)
        reply += chunk
    return bytes(reply)


def pool_for(entry: str, what: str) -> WorkerPool:
    """A process-wide pool, closed when the process exits."""
    pool = WorkerPool(entry, what)
    atexit.register(pool.close)
    return pool


Limiter = Callable[[float], AbstractContextManager[object]]
# A job's reply: JSON-ready, at least ``ok``; run_job adds the worker's memory to a copy.
Job = Callable[[Mapping[str, Any], bytes, Limiter], Mapping[str, Any]]


class OverBudget(BaseException):
    """Raised inside a job by the worker's timer (:func:`alarm`).

    A BaseException, because libraries catch ``Exception`` and would swallow it.
    """


def _on_alarm(signum: int, frame: object) -> None:
    raise OverBudget


@contextlib.contextmanager
def alarm(seconds: float) -> Iterator[None]:
    """Raise :class:`OverBudget` in the worker after ``seconds`` of wall time."""
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def status_mb(field: str, pid: int | str = "self") -> float:
    """A ``/proc/<pid>/status`` size (``VmRSS``, ``VmHWM``, ``VmSize``) in MB; 0 elsewhere."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    match = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
    return int(match.group(1)) / 1024 if match else 0.0


def _reset_peak() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM starts again from VmRSS


def _limit_cpu(seconds: float) -> None:
    """Allow this job ``seconds`` of CPU on top of what the worker has used so far."""

    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime + seconds) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


@contextlib.contextmanager
def headroom(megabytes: float | None) -> Iterator[None]:
    """Within the block, the address space may grow at most ``megabytes`` above its size now.

    The limit set at start stays the ceiling; after the block the worker may use it again.
    """

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = status_mb("VmSize")
    if megabytes is None or not size:
        yield
        return
    wanted = int((size + megabytes) * 1024 * 1024)
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def run_job(
    job: Job, header: Mapping[str, Any], body: bytes, subject: str, memory_mb: int
) -> dict[str, Any]:  # the job's reply (any job's keys), sent back as one JSON line
    """One job within its CPU and memory limits; failures become ``ok: false`` replies."""
    _limit_cpu(float(header.get("cpu_s", 60)))
    _reset_peak()
    before = status_mb("VmRSS")
    room = header.get("headroom_mb")
    try:
        with headroom(room):
            reply = dict(job(header, body, alarm))
    except MemoryError:
        allowed = f"{room} MB more" if room else f"{memory_mb} MB"
        reply = {
            "ok": False,
            "error": f"{subject} needs more than the {allowed} it may use",
            "reason": "memory",
            "recycle": True,
        }
    except OverBudget:  # the timer fired outside the part of the job that expects it
        reply = {"ok": False, "error": f"{subject} ran out of time", "reason": "time"}
        reply["recycle"] = True
    reply["rss_before_mb"] = round(before, 1)
    reply["rss_peak_mb"] = round(max(status_mb("VmHWM"), before), 1)
    return reply


def serve(job: Job, memory_mb: int, subject: str, warm: Callable[[], None] | None = None) -> None:
    """The worker's loop: one JSON header line plus body bytes in, one JSON line out.

    ``warm`` imports what every job needs, once, before the first one.
    """

    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    signal.signal(signal.SIGALRM, _on_alarm)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a library's stray print must not corrupt the replies
    if warm is not None:
        warm()
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            return
        header = json.loads(line)
        body = stdin.read(int(header["length"]))
        reply = run_job(job, header, body, subject, memory_mb)
        out.write(json.dumps(reply, ensure_ascii=False).encode("utf-8", "replace") + b"\n")
        out.flush()
        if reply.get("recycle"):
            return
