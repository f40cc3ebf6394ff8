"""A full disk under the data directory: a clear error with the fix, nothing answered lost.

The data directory is a real tmpfs of a few MB (mounting needs root, as CI has), filled to
the last byte once the first turn is in; the command and the server are the real ones.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from local2.cli._common import offline_parts
from local2.service.agent import Agent
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from local2_testkit.serve_process import ServeProcess
from tests.kit.helpers import local2, make_settings

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "disk"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Write until the disk says it is full; the file is what frees it again."""
    filler = disk / "filler"
    block = b"\0" * (1 << 16)
    with filler.open("wb", buffering=0) as f:
        try:
            while True:
                f.write(block)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def turns_of(home: Path, session: str) -> list[dict]:
    """The session's turns as the store has them (read in this process)."""
    settings = make_settings(home, system={"data_dir": str(home), "checkpoint_path": None})
    agent = Agent(settings, **offline_parts())
    try:
        return list(agent.sessions.history(session))
    finally:
        agent.close()


def test_a_full_disk_is_said_with_its_fix_and_nothing_is_lost(small_disk: Path) -> None:
    home = small_disk / "home"
    with FakeOllama(RuleBrain()) as server:
        env = {"OLLAMA_HOST": server.url, "LOCAL2_HOME": str(home)}
        ask = ("--backend", "ollama", "--json")
        first = local2("ask", "What is the capital of France?", *ask, env=env)
        assert first.returncode == 0, first.stderr
        session = json.loads(first.stdout)["session_id"]

        filler = fill(small_disk)
        full = local2("ask", "What is the capital of Italy?", "-s", session, *ask, env=env)
        assert full.returncode == 1
        assert "Traceback" not in full.stderr, full.stderr
        assert "is full" in full.stderr and str(home) in full.stderr, full.stderr
        assert "Fix:" in full.stderr and "Free space" in full.stderr

        filler.unlink()  # room again: the session goes on, with every answered turn
        again = local2("ask", "What is the capital of Spain?", "-s", session, *ask, env=env)
        assert again.returncode == 0, again.stderr
    asked = [t["user"] for t in turns_of(home, session)]
    assert asked == ["What is the capital of France?", "What is the capital of Spain?"]


def test_the_api_answers_507_with_error_and_fix(small_disk: Path, tmp_path: Path) -> None:
    home = small_disk / "home"
    config = tmp_path / "conf"
    config.mkdir()
    (config / "generator.yaml").write_text("backend: ollama\n")
    with FakeOllama(RuleBrain()) as server:
        env = {"OLLAMA_HOST": server.url, "LOCAL2_HOME": str(home)}
        with ServeProcess(config, env=env) as api:
            first = httpx.post(f"{api.url}/query", json={"query": "Capital of France?"}, timeout=60)
            assert first.status_code == 200, first.text
            session = first.json()["session_id"]
            httpx.post(f"{api.url}/query", json={"query": "Hi", "wait": "critique"}, timeout=60)
            filler = fill(small_disk)
            body = {"query": "Capital of Italy?", "session_id": session}
            full = httpx.post(f"{api.url}/query", json=body, timeout=60)
            assert full.status_code == 507, full.text
            detail = full.json()["detail"]
            assert str(home) in detail["error"] and "Free space" in detail["fix"]
            filler.unlink()
            body = {"query": "Capital of Spain?", "session_id": session}
            again = httpx.post(f"{api.url}/query", json=body, timeout=60)
            assert again.status_code == 200, again.text
            history = httpx.get(f"{api.url}/sessions/{session}/history", timeout=30).json()
            assert "Traceback" not in api.log()
    assert [t["user"] for t in history["turns"]] == ["Capital of France?", "Capital of Spain?"]
