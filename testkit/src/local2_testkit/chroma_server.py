"""A throwaway Chroma server (``chroma run``) on a free loopback port, for tests and benchmarks.

with TempChroma() as chroma:
    settings.memory.chroma_url = chroma.url
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from local2.ports import free_port
from local2_testkit.processes import end_group, wait_until_answers


class ChromaMissing(RuntimeError):
    """No ``chroma`` command beside this Python."""


def chroma_command() -> Path:
    """The ``chroma`` CLI installed beside this Python (it comes with chromadb)."""
    command = Path(sys.executable).with_name("chroma")
    if not command.exists():
        raise ChromaMissing(
            f"{command} is missing: chromadb is not installed here (scripts/setup.sh --dev)."
        )
    return command


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
        chroma = chroma_command()
        self.dir = Path(tempfile.mkdtemp(prefix="local2-chroma-"))
        self.port = free_port()
        log = (self.dir / "server.log").open("wb")
        command = [str(chroma), "run", "--path", str(self.dir / "data")]
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
        try:
            wait_until_answers(
                self._process, f"{self.url}/api/v2/heartbeat", self.start_timeout_s, self.log
            )
        except RuntimeError:
            self.stop()
            raise
        return self

    def log(self) -> str:
        path = (self.dir or Path("/nonexistent")) / "server.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        end_group(self._process)
        self._process = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self) -> TempChroma:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
