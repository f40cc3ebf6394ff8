"""A quiet server: no dependency's log lines below ``system.log_level``, on any surface.

bm25s sets its own logger to DEBUG when imported, and says "Building index from IDs" each
time LoCAL2 builds a BM25 index; it reached the terminal and the MCP server's stderr once
anything had put a handler on the root logger (the MCP SDK's server does, with
``logging.basicConfig``; so does a library's first ``logging.warning``). Each surface is a
new ``local2`` process here, on a fresh data directory, that builds the folder's index: the
command line's ``index`` and ``search``, ``serve`` (with ``/mcp`` mounted, so the SDK's
server is built; main's wrote the line there) and ``ui``; ``local2 mcp``'s stderr is checked
through the TypeScript client in tests/mcp/test_mcp_hosts.py. The level holds both ways: a
dependency's WARNING line is written, and at ``DEBUG`` bm25s's line is too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from local2_testkit.serve_process import ServeProcess
from tests.kit.mcp_clients import write_config

DEBUG_LINE = "Building index from IDs"
PASSAGE = "The toll of the Kelsby bridge paid for its repairs."


def folder_config(base: Path, level: str) -> tuple[Path, dict[str, str]]:
    """A config with one folder to search and a fresh data directory (its index unbuilt),
    no Ollama (the embedded model) and ``system.log_level`` at ``level``."""
    folder = base / "notes"
    folder.mkdir(parents=True)
    (folder / "kelsby.md").write_text(PASSAGE + "\n")
    config = write_config(
        base / "config",
        {
            "system": {"data_dir": str(base / "data"), "log_level": level},
            "files": {"roots": [str(folder)]},
            "memory": {"embedder": "lexical"},
        },
    )
    closed = "http://127.0.0.1:9"  # nothing listens there: no model server is reached
    return config, {**os.environ, "OLLAMA_HOST": closed, "LOCAL2_HOME": str(base / "data")}


def local2(config: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local2.cli", "--config", str(config), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def test_the_level_holds_against_a_handler_a_dependency_puts_on_the_root(tmp_path: Path) -> None:
    """The two ways a handler lands on the root logger (the MCP SDK's ``basicConfig``, a
    library's bare ``logging.warning``), then a real BM25 index built: at WARNING only the
    warning is written; at DEBUG bm25s's line is too (the check can see it)."""
    script = (
        "import logging, sys\n"
        "from local2.config import quiet_logging\n"
        "quiet_logging(sys.argv[1])\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "MCPServer(name='x', log_level='WARNING')\n"
        "logging.warning('a warning from a dependency')\n"
        "from local2.retrieval import Bm25\n"
        "Bm25([['kelsby', 'bridge'], ['toll']], k1=1.2, b=0.75)\n"
    )
    said = {}
    for level in ("WARNING", "DEBUG"):
        run = subprocess.run(
            [sys.executable, "-c", script, level],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        said[level] = run.stderr
    assert "a warning from a dependency" in said["WARNING"], said["WARNING"]
    assert DEBUG_LINE not in said["WARNING"] and "DEBUG" not in said["WARNING"]
    assert DEBUG_LINE in said["DEBUG"]


def test_the_command_line_prints_no_dependency_lines(tmp_path: Path) -> None:
    config, env = folder_config(tmp_path, "WARNING")
    indexed = local2(config, env, "index")
    found = local2(config, env, "search", "Kelsby toll")
    assert indexed.returncode == 0 and found.returncode == 0, indexed.stderr + found.stderr
    assert "Kelsby bridge" in found.stdout  # the index was built and read: bm25s ran
    for said in (indexed.stderr, found.stderr):
        assert DEBUG_LINE not in said and "DEBUG" not in said, said
    config, env = folder_config(tmp_path / "at-debug", "DEBUG")
    assert DEBUG_LINE in local2(config, env, "index").stderr  # the same run, asked for DEBUG


@pytest.mark.parametrize("ui", [False, True], ids=["serve", "ui"])
def test_a_server_writes_no_dependency_lines(tmp_path: Path, ui: bool) -> None:
    config, env = folder_config(tmp_path, "WARNING")
    with ServeProcess(config, env=env, ui=ui, cold=True) as served:
        hits = httpx.get(f"{served.url}/search", params={"q": "Kelsby toll"}, timeout=120)
        assert hits.status_code == 200 and "Kelsby bridge" in hits.text, hits.text
        log = served.log()
    assert DEBUG_LINE not in log and "DEBUG" not in log, log
