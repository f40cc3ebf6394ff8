"""A real ``local2 serve --no-ui`` process on a free loopback port, for tests and benchmarks.

with ServeProcess(config_dir, env={"LOCAL2_POSTGRES_URL": url}) as api:
    httpx.post(f"{api.url}/query", json={"query": "Hi"})

with serve_processes(config_dir, env, [home_a, home_b]) as (a, b):  # started side by side
    ...

``ui=True`` serves the app too; ``command="ui"`` starts ``local2 ui`` instead (the app and
the API, as a person opens the app); ``host="0.0.0.0"`` binds every address (it is still
reached at 127.0.0.1).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from local2.ports import free_port
from local2_testkit.forked import start_local2
from local2_testkit.processes import Process, end_group, wait_until_answers


class ServeProcess:
    """One API process; :meth:`kill` ends it at once (SIGKILL), as a crash would."""

    def __init__(
        self,
        config_dir: Path,
        *,
        env: Mapping[str, str] | None = None,
        start_timeout_s: float = 300.0,  # a loaded CI machine imports slowly
        host: str = "127.0.0.1",
        ui: bool = False,
        command: str = "serve",  # or "ui": `local2 ui`, which always serves the app
        args: tuple[str, ...] = (),  # more options for `serve`, e.g. ("--backend", "ollama")
        # A new interpreter, as a person's server starts: what benchmarks measure (a forked
        # one shares the warm process's frozen, preloaded heap).
        cold: bool = False,
    ) -> None:
        self.config_dir = config_dir
        self.cold = cold
        self.env = dict(env or {})
        self.host = host
        self.ui = ui or command == "ui"
        self.command = command
        self.args = args
        self.start_timeout_s = start_timeout_s
        self.port = 0
        self.process: Process | None = None
        self._log = Path(tempfile.mkstemp(prefix="local2-serve-", suffix=".log")[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ServeProcess:
        return self.launch().wait_ready()

    def launch(self) -> ServeProcess:
        """Start the process without waiting (start several, then :meth:`wait_ready` each)."""
        self.port = free_port()
        command = ["--config", str(self.config_dir)]
        command += [self.command, *([] if self.ui else ["--no-ui"]), *self.args]
        command += ["--host", self.host, "--port", str(self.port)]
        env = {**os.environ, "PYTHONFAULTHANDLER": "1", **self.env}
        with self._log.open("wb") as log:  # forked from the warm local2 (local2_testkit.forked)
            self.process = start_local2(command, env, log.fileno(), cold=self.cold)
        return self

    def wait_ready(self) -> ServeProcess:
        assert self.process is not None, "launch() first"
        try:
            wait_until_answers(self.process, f"{self.url}/live", self.start_timeout_s, self.log)
        except RuntimeError as exc:
            if self.process.poll() is None:  # stuck: have it print where (faulthandler)
                os.kill(self.process.pid, signal.SIGABRT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(5)
            stuck = self.log()
            self.stop()
            raise RuntimeError(f"{exc}\n{stuck}") from None
        return self

    def log(self, tail: int | None = 3000) -> str:
        """The process's output so far: its last ``tail`` characters (None: all of it)."""
        text = self._log.read_text(errors="replace") if self._log.exists() else ""
        return text if tail is None else text[-tail:]

    def kill(self) -> None:
        """SIGKILL: no clean-up runs, connections drop, as in a crash."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def end(self, grace_s: float = 20) -> int | None:
        """SIGTERM, as a person's Ctrl-C or systemd stops it (SIGKILL past ``grace_s``); its
        exit status. The log stays readable until :meth:`stop`."""
        process = self.process
        end_group(process, grace_s=grace_s)
        return None if process is None else process.poll()

    def stop(self) -> None:
        end_group(self.process, grace_s=20)
        self.process = None
        self._log.unlink(missing_ok=True)

    def __enter__(self) -> ServeProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def serve_processes(
    config_dir: Path, env: Mapping[str, str], homes: Sequence[Path]
) -> Iterator[list[ServeProcess]]:
    """One ``serve`` process per home directory (``LOCAL2_HOME``), started side by side and
    all stopped at the end: several processes over one shared store."""
    servers = [ServeProcess(config_dir, env={**env, "LOCAL2_HOME": str(home)}) for home in homes]
    try:
        for server in servers:
            server.launch()
        yield [server.wait_ready() for server in servers]
    finally:
        for server in servers:
            server.stop()
