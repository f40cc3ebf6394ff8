"""What the HTTP tests share: LangGraph Server (``langgraph dev``) started on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from local2.ports import free_port


@contextmanager
def langgraph_dev(tmp_path: Path, env: dict[str, str]) -> Iterator[str]:
    """``langgraph dev`` on the shipped langgraph.json, from a stand-in for the checkout."""
    port = free_port()
    (tmp_path / "langgraph.json").write_text((ROOT / "langgraph.json").read_text())
    (tmp_path / "src").symlink_to(ROOT / "src", target_is_directory=True)
    command = [str(LANGGRAPH), "dev", "--no-browser", "--no-reload"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    with (tmp_path / "langgraph.log").open("w") as log:
        server = subprocess.Popen(
            command,
            cwd=tmp_path,
            # no version check: its thread asks the package index (the network) and makes
            # a logging handler while uvicorn configures logging, a race that killed the
            # server at start-up under load ("'StreamHandler' object has no attribute
            # 'stream'")
            env={**os.environ, "LANGGRAPH_NO_VERSION_CHECK": "true", **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                assert server.poll() is None, (tmp_path / "langgraph.log").read_text()
                assert time.monotonic() < deadline, "langgraph dev did not start"
                try:
                    if httpx.get(f"{base}/ok", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            yield base
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(30)


ROOT = Path(__file__).parents[2]


LANGGRAPH = Path(sys.executable).with_name("langgraph")
