"""``local2`` commands for the tests, forked from a warm process (:mod:`.fork_server`)
rather than started cold: the same real process, arguments, environment, pipes and exit
code as ``subprocess.run([python, "-m", "local2.cli", ...])``, without an interpreter's start
and the command's imports each time. One server per test process, started on first use and
stopped at its exit."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from local2_testkit.fork_server import MAX_REQUEST


class ForkServer:
    """The warm process and the socket it forks commands from."""

    def __init__(self) -> None:
        self.directory = tempfile.TemporaryDirectory(prefix="local2-fork-")
        self.path = str(Path(self.directory.name) / "socket")
        # Without a fixed terminal size, a console made at import reads the size of each
        # child's own (pytest's workers set COLUMNS=80, which rich would keep for good).
        self.env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "local2_testkit.fork_server", self.path],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C at the terminal is for pytest, not for it
        )
        assert self.process.stdout is not None
        ready = self.process.stdout.readline()
        if ready.strip() != b"ready":
            raise RuntimeError(f"the fork server did not start (exit {self.process.wait()})")

    def run(
        self,
        args: Sequence[str],
        env: Mapping[str, str],
        stdin: str | None,
        cwd: Path | None,
        timeout: float,
        module: str = "local2.cli",
    ) -> subprocess.CompletedProcess[str]:
        """Run ``python -m MODULE ARGS`` (``local2`` by default) as a child of the server;
        like ``subprocess.run(..., capture_output=True, text=True, timeout=timeout)``,
        TimeoutExpired included."""
        argv = [sys.executable, "-m", module, *args]
        request = {
            "module": module,
            "args": list(args),
            "env": dict(env),
            "cwd": str(cwd or os.getcwd()),
        }
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
            conn.connect(self.path)
            socket.send_fds(conn, [json.dumps(request).encode()], [in_r, out_w, err_w])
            for fd in (in_r, out_w, err_w):
                os.close(fd)
            pid = json.loads(conn.recv(MAX_REQUEST))["pid"]
            deadline = time.monotonic() + timeout
            outputs = Outputs(in_w, stdin, out_r, err_r)
            outputs.wait(deadline)
            conn.settimeout(max(deadline - time.monotonic(), 0.01))
            try:
                returncode = json.loads(conn.recv(MAX_REQUEST))["returncode"]
            except (TimeoutError, ValueError):
                outputs.timed_out = True
            if outputs.timed_out:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                outputs.wait(time.monotonic() + 10)
                raise subprocess.TimeoutExpired(argv, timeout, outputs.text(0), outputs.text(1))
        return subprocess.CompletedProcess(argv, returncode, outputs.text(0), outputs.text(1))

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.directory.cleanup()


class Outputs:
    """The child's stdin written and its stdout and stderr read, each on its own thread,
    as ``Popen.communicate`` does."""

    def __init__(self, stdin_fd: int, stdin: str | None, *read_fds: int) -> None:
        self.chunks: list[list[bytes]] = [[] for _ in read_fds]
        self.timed_out = False
        self.threads = [
            threading.Thread(target=self._write, args=(stdin_fd, stdin), daemon=True),
            *(
                threading.Thread(target=self._read, args=(fd, chunks), daemon=True)
                for fd, chunks in zip(read_fds, self.chunks, strict=True)
            ),
        ]
        for thread in self.threads:
            thread.start()

    @staticmethod
    def _write(fd: int, text: str | None) -> None:
        with open(fd, "wb") as pipe, contextlib.suppress(BrokenPipeError):
            if text:
                pipe.write(text.encode())

    @staticmethod
    def _read(fd: int, chunks: list[bytes]) -> None:
        with open(fd, "rb") as pipe:
            while block := pipe.read1(65536):
                chunks.append(block)

    def wait(self, deadline: float) -> None:
        for thread in self.threads:
            thread.join(max(deadline - time.monotonic(), 0))
            if thread.is_alive():
                self.timed_out = True
                return

    def text(self, which: int) -> str:
        """What the child wrote, as ``text=True`` gives it (newlines made ``\\n``)."""
        data = b"".join(self.chunks[which]).decode(errors="replace")
        return data.replace("\r\n", "\n").replace("\r", "\n")


_server: ForkServer | None = None
_starting = threading.Lock()


def run_local2(
    args: Sequence[str],
    env: Mapping[str, str],
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float = 180,
    cold: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``local2 ARGS`` forked from this test process's warm server (started on first use),
    or started ``cold`` as a new interpreter; cold too when ``env`` changes a ``PYTHON*``
    variable, which only an interpreter's start reads."""
    global _server
    with _starting:
        if not cold and (_server is None or _server.process.poll() is not None):
            _server = ForkServer()
            atexit.register(_server.close)
        server = _server
    if cold or server is None or _starts_differently(server.env, env):
        return subprocess.run(
            [sys.executable, "-m", "local2.cli", *args],
            capture_output=True,
            text=True,
            env=dict(env),
            input=stdin,
            cwd=cwd,
            timeout=timeout,
        )
    return server.run(args, env, stdin, cwd, timeout)


def _starts_differently(started: Mapping[str, str], env: Mapping[str, str]) -> bool:
    names = {k for k in (*started, *env) if k.startswith("PYTHON")}
    return any(started.get(k) != env.get(k) for k in names)
