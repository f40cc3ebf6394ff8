"""Helpers any test may use: settings in a temp folder, the ``local2`` command as a real
process, a barrier that tells whether work ran at once, bearer-token clients, the shipped
tools' schemas, and where this run's screenshots go."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from local2.config import Settings, load_settings
from local2_testkit.forked import run_local2

SCREENSHOTS: list[Path] = []  # this run's screenshot folder, once the session made it


def screenshot_path(name: str) -> Path:
    """The file of the screenshot ``name`` in this run's folder."""
    return SCREENSHOTS[-1] / f"{name}.png"


def meet(barrier: threading.Barrier, timeout: float = 10) -> bool:
    """Whether everyone the barrier waits for arrived within ``timeout``: work that runs at
    once meets; run one after the other, the first waits alone and the barrier breaks (a
    test of concurrency that does not depend on the machine's speed)."""
    try:
        barrier.wait(timeout=timeout)
    except threading.BrokenBarrierError:
        return False
    return True


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    base: dict[str, Any] = {"system": {"data_dir": str(tmp_path / "data")}}
    for section, values in overrides.items():
        base[section] = {**base.get(section, {}), **values}
    return load_settings(overrides=base)


def mock_search_config(directory: Path) -> Path:
    """A config directory whose web search is the canned mock provider (for ``LOCAL2_CONFIG``
    in tests that start ``local2`` and need search results without the internet)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "web.yaml").write_text("search:\n  provider: mock\n")
    return directory


def local2(
    *args: str,
    env: Mapping[str, str],
    stdin: str | None = None,
    cwd: Path | None = None,
    timeout: float = 180,
    cold: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run the ``local2`` command as a person would: a real process with ``env`` added.

    The process is forked from a warm one that has the command's libraries imported
    (``local2_testkit.forked``: same arguments, environment, pipes and exit code, without
    an interpreter's start each time); ``cold`` starts a new interpreter, for a test about
    the start itself. ``LOCAL2_TESTS_COLD=1`` starts every command cold."""
    return run_local2(args, {**os.environ, **env}, stdin, cwd, timeout, cold=cold)


@contextmanager
def bearer_clients(
    url: str, tokens: Mapping[str, str], timeout: float = 60
) -> Iterator[dict[str, httpx.Client]]:
    """One HTTP client per person, each sending that person's bearer token; closed after."""
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(
                httpx.Client(
                    base_url=url, timeout=timeout, headers={"Authorization": f"Bearer {token}"}
                )
            )
            for name, token in tokens.items()
        }


def tool_schemas() -> dict[str, dict[str, Any]]:
    """Every shipped tool's parameters by name: what the model is told (each tool declares
    its schema beside its code, so the modules that declare them are imported here)."""
    import local2.tools._files
    import local2.tools._library_tools
    import local2.tools._memory_tools
    import local2.tools._web  # noqa: F401
    from local2.tools._base import declared_tools

    return {name: schema.parameters for name, schema in declared_tools().items()}
