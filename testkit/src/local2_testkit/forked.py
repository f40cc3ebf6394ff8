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
            stdin=subprocess.PIPE,  # its end is the server's: it stops when this process does
            stdout=subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C at the terminal is for pytest, not for it
        )
        assert self.process.stdout is not None
        ready = self.process.stdout.readline()
        if ready.strip() != b"ready":
            raise RuntimeError(f"the fork server did not start (exit {self.process.wait()})")

    def start(
        self,
        args: Sequence[str],
        env: Mapping[str, str],
        fds: tuple[int, int, int],
        cwd: Path | None = None,
        module: str = "local2.cli",
        new_session: bool = False,
    ) -> ForkedProcess:
        """Fork ``python -m MODULE ARGS`` (``local2`` by default) with ``fds`` as its stdin,
        stdout and stderr (the caller closes its own copies)."""
        request = {
            "module": module,
            "args": list(args),
            "env": dict(env),
            "cwd": str(cwd or os.getcwd()),
            "new_session": new_session,
        }
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        conn.connect(self.path)
        socket.send_fds(conn, [json.dumps(request).encode()], list(fds))
        pid = json.loads(conn.recv(MAX_REQUEST))["pid"]
        return ForkedProcess([sys.executable, "-m", module, *args], pid, conn)

    def run(
        self,
        args: Sequence[str],
        env: Mapping[str, str],
        stdin: str | None,
        cwd: Path | None,
        timeout: float,
        module: str = "local2.cli",
    ) -> subprocess.CompletedProcess[str]:
        """Run ``python -m MODULE ARGS`` as a child of the server; like ``subprocess.run(...,
        capture_output=True, text=True, timeout=timeout)``, TimeoutExpired included."""
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            process = self.start(args, env, (in_r, out_w, err_w), cwd, module)
        finally:
            for fd in (in_r, out_w, err_w):
                os.close(fd)
        with process:
            deadline = time.monotonic() + timeout
            outputs = Outputs(in_w, stdin, out_r, err_r)
            outputs.wait(deadline)
            try:
                returncode = process.wait(max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                outputs.timed_out = True
            if outputs.timed_out:
                process.kill()
                outputs.wait(time.monotonic() + 10)
                raise subprocess.TimeoutExpired(
                    process.args, timeout, outputs.text(0), outputs.text(1)
                )
        return subprocess.CompletedProcess(
            process.args, returncode, outputs.text(0), outputs.text(1)
        )

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()
        self.directory.cleanup()


class ForkedProcess:
    """A forked child as ``subprocess.Popen`` shows a process: ``pid``, ``poll``, ``wait``,
    signals. Its exit status comes from the server, whose child it is."""

    def __init__(self, args: list[str], pid: int, conn: socket.socket) -> None:
        self.args = args
        self.pid = pid
        self.returncode: int | None = None
        self._conn = conn

    def poll(self) -> int | None:
        if self.returncode is None:
            self._conn.setblocking(False)
            try:
                self._read_status()
            except BlockingIOError:
                pass
            finally:
                if self.returncode is None:
                    self._conn.setblocking(True)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._conn.settimeout(timeout)
            try:
                self._read_status()
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
        assert self.returncode is not None
        return self.returncode

    def _read_status(self) -> None:
        message = self._conn.recv(MAX_REQUEST)
        if not message:
            raise RuntimeError("the fork server went away before the child ended")
        self.returncode = int(json.loads(message)["returncode"])
        self._conn.close()

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def __enter__(self) -> ForkedProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.returncode is None:
            self._conn.close()


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


def warm_server(env: Mapping[str, str] | None = None, cold: bool = False) -> ForkServer | None:
    """This test process's fork server, started on first use. None (start it cold) when
    ``cold``, when ``LOCAL2_TESTS_COLD=1`` (every command a new interpreter, as before the
    server), or when ``env`` changes a ``PYTHON*`` variable, which only an interpreter's
    start reads."""
    global _server
    if cold or os.environ.get("LOCAL2_TESTS_COLD") == "1":
        return None
    with _starting:
        if _server is None or _server.process.poll() is not None:
            _server = ForkServer()
            atexit.register(_server.close)
        server = _server
    if env is not None and _starts_differently(server.env, env):
        return None
    return server


def run_local2(
    args: Sequence[str],
    env: Mapping[str, str],
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float = 180,
    cold: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``local2 ARGS`` forked from this test process's warm server, or started cold as a
    new interpreter (:func:`warm_server` says when)."""
    server = warm_server(env, cold)
    if server is None:
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


def start_local2(
    args: Sequence[str], env: Mapping[str, str], log: int, cold: bool = False
) -> ForkedProcess | subprocess.Popen[bytes]:
    """``local2 ARGS`` left running in a process group of its own, stdin empty, stdout and
    stderr to the file ``log`` (a descriptor): ``Popen(..., start_new_session=True)``, forked
    from the warm server unless it starts cold (:func:`warm_server`)."""
    server = warm_server(env, cold)
    if server is None:
        return subprocess.Popen(
            [sys.executable, "-m", "local2.cli", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env),
            start_new_session=True,
        )
    stdin = os.open(os.devnull, os.O_RDONLY)
    try:
        return server.start(args, env, (stdin, log, log), new_session=True)
    finally:
        os.close(stdin)


# Read at each child's start by the server itself (it enables faulthandler); the other
# PYTHON* variables only an interpreter's own start reads.
SET_BY_THE_CHILD = frozenset({"PYTHONFAULTHANDLER"})


def _starts_differently(started: Mapping[str, str], env: Mapping[str, str]) -> bool:
    names = {k for k in (*started, *env) if k.startswith("PYTHON")} - SET_BY_THE_CHILD
    return any(started.get(k) != env.get(k) for k in names)
