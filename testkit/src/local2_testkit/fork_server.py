"""A warm ``local2`` for the tests: one process that has imported the command's libraries
once, and forks a child for each command a test runs (``python -m
local2_testkit.fork_server SOCKET``; :mod:`local2_testkit.forked` is its client).

Each child is a real process, as ``python -m local2.cli ARGS`` would be: its own pid (and
process group, if asked), the test's environment, working directory and pipes or files for
stdin, stdout and stderr, the command's exit code or signal, Python's own shutdown at the
end (threads joined, ``atexit`` run). What
it skips is the start: an interpreter and about 1,400 modules (langgraph, LangSmith,
pydantic...) imported again for every command, most of a short command's second.

The server stays single-threaded so that forking it is safe: it preloads only modules that
start no thread (numpy's, chromadb's and onnxruntime's pools are left to the child), serves
one Unix socket with a selector, and learns of each child's end from its pidfd.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import importlib
import importlib.util
import json
import os
import runpy
import selectors
import signal
import socket
import sys
from dataclasses import dataclass, field

# What a command imports before it does anything, none of which starts a thread.
PRELOAD = ("local2.cli._main", "local2.service.agent", "langchain_ollama", "local2.http._app")
MAX_REQUEST = 1 << 20
STDIO = 3  # stdin, stdout, stderr


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


def preload(modules: tuple[str, ...] = PRELOAD) -> None:
    """Import ``modules``; refuse to serve if one of them started a thread (a fork would
    copy its locks and not it)."""
    for name in modules:
        importlib.import_module(name)
        if threads() != 1:
            raise SystemExit(f"fork_server: importing {name} started a thread; not forking")
    # The TLS contexts every HTTP client of a command verifies with (local2.ports), made once
    # here rather than in each child (about 25 ms of CPU each; they start no thread).
    from local2.ports import tls_context

    tls_context(True)
    tls_context(False)
    gc.collect()
    gc.freeze()  # the preloaded objects stay in pages the children share


def become_the_command(request: dict[str, object], fds: list[int], ready: int) -> None:
    """In the child: take the request's pipes, environment and directory, say so on
    ``ready``, and run ``local2`` as ``python -m local2.cli`` does. Never returns: the
    command's exit ends the process."""
    for fd, target in zip(fds, range(STDIO), strict=True):
        os.dup2(fd, target)
        os.close(fd)
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    os.chdir(str(request["cwd"]))
    if request.get("new_session"):
        os.setsid()  # a process group of its own, as Popen(start_new_session=True) gives
    if os.environ.get("PYTHONFAULTHANDLER"):
        faulthandler.enable()  # what the variable does at an interpreter's start
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.write(ready, b"1")
    os.close(ready)
    args = request["args"]
    assert isinstance(args, list)
    module = str(request.get("module") or "local2.cli")
    sys.path[0] = os.getcwd()  # as ``-m`` puts the working directory first
    spec = importlib.util.find_spec(module)
    sys.argv = [str(spec.origin if spec else module), *map(str, args)]
    gc.enable()
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    raise SystemExit(0)


@dataclass
class Server:
    """The socket, and the connection waiting for each running child's exit status."""

    listener: socket.socket
    selector: selectors.DefaultSelector = field(default_factory=selectors.DefaultSelector)
    waiting: dict[int, tuple[socket.socket, int]] = field(default_factory=dict)  # pidfd ->

    def serve(self) -> None:
        """Until stdin ends: the test process that started the server holds its other end,
        so a test process that dies, even by SIGKILL, leaves no server behind."""
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(sys.stdin.fileno(), selectors.EVENT_READ)
        while True:
            for key, _ in self.selector.select():
                if key.fileobj is self.listener:
                    self.start_one()
                elif key.fd == sys.stdin.fileno():
                    if not os.read(key.fd, 512):
                        raise SystemExit(0)
                else:
                    self.report_one(int(key.fd))

    def start_one(self) -> None:
        conn, _ = self.listener.accept()
        message, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, STDIO)
        if len(fds) != STDIO or not message:
            conn.close()
            for fd in fds:
                os.close(fd)
            return
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the command keeps none of the server's descriptors
            self.listener.close()
            self.selector.close()
            for pidfd, (other, _) in self.waiting.items():
                os.close(pidfd)
                other.close()
            conn.close()
            os.close(ready_r)
            become_the_command(json.loads(message), fds, ready_w)
        for fd in (*fds, ready_w):
            os.close(fd)
        os.read(ready_r, 1)  # its group and pipes are set (or it died): as Popen returns
        os.close(ready_r)
        pidfd = os.pidfd_open(pid)
        self.waiting[pidfd] = (conn, pid)
        self.selector.register(pidfd, selectors.EVENT_READ)
        conn.sendall(json.dumps({"pid": pid}).encode())

    def report_one(self, pidfd: int) -> None:
        conn, pid = self.waiting.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        with contextlib.suppress(OSError):  # the test that asked may have gone
            conn.sendall(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
        conn.close()


def main(path: str) -> None:
    preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    Server(listener).serve()


if __name__ == "__main__":
    main(sys.argv[1])
