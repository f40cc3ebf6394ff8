"""The worker's side: one job at a time, within limits the server cannot take back.

Extracting a hostile page in the server took tens of seconds and hundreds of MB, and a
thread cannot be stopped; a PDF stream that inflates to gigabytes took 3 GB here. So the
bytes go to a child process that limits its own address space (``RLIMIT_AS``: at start,
and per job ``headroom_mb`` above what it already uses) and, per job, its CPU time
(``RLIMIT_CPU``, which also ends it if the server dies mid-job). The server kills it at the
job's deadline (:mod:`local2.bounded._pool`). A job is a function of the JSON header and the
body bytes returning a JSON-able reply; a reply with ``recycle`` ends the worker after it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

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
