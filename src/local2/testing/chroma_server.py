"""A throwaway Chroma server (``chroma run``) on a free loopback port, for tests and benchmarks.

with TempChroma() as chroma:
    settings.memory.chroma_url = chroma.url
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from local2.testing.postgres import free_port


def chroma_command() -> Path:
    """The ``chroma`` CLI installed beside this Python (it comes with chromadb)."""
    return Path(sys.executable).with_name("chroma")


class TempChroma:
    """``chroma run --path <tmp> --port <free>`` on 127.0.0.1, stopped and removed on exit."""

    def __init__(self, start_timeout_s: float = 60.0) -> None:
        self.start_timeout_s = start_timeout_s
        self.port = 0
        self.dir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> TempChroma:
        self.dir = Path(tempfile.mkdtemp(prefix="local2-chroma-"))
        self.port = free_port()
        log = (self.dir / "server.log").open("wb")
        command = [str(chroma_command()), "run", "--path", str(self.dir / "data")]
        command += ["--host", "127.0.0.1", "--port", str(self.port)]
        self._process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
            start_new_session=True,
        )
        log.close()
        atexit.register(self.stop)
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"chroma run exited: {self.log()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/api/v2/heartbeat", timeout=2).status_code == 200:
                    return self
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("chroma run did not answer in time")
            time.sleep(0.2)

    def log(self) -> str:
        path = (self.dir or Path("/nonexistent")) / "server.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGTERM)
            try:
                self._process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait(5)
        self._process = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self) -> TempChroma:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
