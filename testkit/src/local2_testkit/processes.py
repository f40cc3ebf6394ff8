"""What the throwaway servers of tests and benchmarks share: a free port, waiting until a
started process answers over HTTP, and ending its process group."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any, Protocol

import httpx

from local2.ports import tls_context


class Process(Protocol):
    """What these helpers use of a process: a ``subprocess.Popen``, or a forked child
    (:class:`local2_testkit.forked.ForkedProcess`)."""

    @property
    def pid(self) -> int: ...

    @property
    def args(self) -> Any: ...  # Popen's own type for it: a command line, in any form

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


def wait_until_answers(
    process: Process, url: str, timeout_s: float, log: Callable[[], str]
) -> None:
    """Return once ``url`` answers 200; raise with the process's log if it exits or is slow."""
    deadline = time.monotonic() + timeout_s
    # One client for every try: a new one each 0.2 s would build its TLS context each time.
    with httpx.Client(timeout=2, verify=tls_context()) as client:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{process.args!r} exited: {log()}")
            with contextlib.suppress(httpx.HTTPError):
                if client.get(url).status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not answer in {timeout_s:.0f} s: {log()}")
            time.sleep(0.2)


def end_group(process: Process | None, grace_s: float = 15) -> None:
    """SIGTERM the process's group, SIGKILL it if it lingers past ``grace_s``."""
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)
