"""Shared fixtures: isolated data directories and settings for every test."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from local2.config import Settings, load_settings
from local2_testkit.forked import run_local2
from local2_testkit.web_server import LocalServer, Route

# llama.cpp's OpenMP threads sleep at barriers instead of spinning, for this process (its
# tests import llama_cpp before the product would set it) and every ``local2`` it starts:
# two test workers on two shared cores leave no idle core to spin on (bench/HISTORY.md,
# "The suite's time"). The product sets the same default (models.embedded).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Bytecode caches are written even where the machine's environment forbids them
# (PYTHONDONTWRITEBYTECODE=1 here): otherwise every test worker rewrites and compiles each
# test module's assertions again (about 11 CPU-s a worker) and every process the tests start
# compiles the product's modules again. The workers and processes inherit it from here.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` hands out the heaviest test files first (tests/scheduling.py)."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from tests.scheduling import HeaviestFileFirst

    return HeaviestFileFirst(config, log)


_SCREENSHOTS: list[Path] = []  # this run's screenshot folder, once the session made it


@pytest.fixture(scope="session", autouse=True)
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the browser tests keep their screenshots: a folder under pytest's temp folder
    (``--basetemp``), never the repository's tracked files."""
    folder = tmp_path_factory.mktemp("screenshots", numbered=False)
    _SCREENSHOTS.append(folder)
    return folder


def screenshot_path(name: str) -> Path:
    """The file of the screenshot ``name`` in this run's folder."""
    return _SCREENSHOTS[-1] / f"{name}.png"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads the developer's config or data, or a real Ollama."""
    home = tmp_path / "home"
    monkeypatch.setenv("LOCAL2_HOME", str(home))
    monkeypatch.delenv("LOCAL2_CONFIG", raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens on the discard port
    # Keyless web search (ddgs) reaches public hosts through its own client: in tests (and the
    # processes they start) it goes through a proxy where nothing listens, so it can only fail.
    monkeypatch.setenv("DDGS_PROXY", "http://127.0.0.1:9")
    for key in ("TAVILY_API_KEY", "BRAVE_API_KEY", "LOCAL2_API_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return home


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


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
def serve() -> Iterator[Callable[[dict[str, Route]], LocalServer]]:
    """Start real HTTP servers on 127.0.0.1 (``serve(routes)``); all stopped after the test."""
    servers: list[LocalServer] = []

    def start(routes: dict[str, Route]) -> LocalServer:
        servers.append(LocalServer(routes))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.fixture
def fake_ollama() -> Iterator[Any]:
    from local2_testkit.ollama_server import FakeOllama

    with FakeOllama() as server:
        yield server


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


# -- the team-scale parts, started once per test session on loopback -------------------------


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Any]:
    """A throwaway Postgres cluster (Debian's package, installed by setup.sh --dev)."""
    from local2_testkit.postgres import PostgresMissing, TempPostgres

    try:
        cluster = TempPostgres().start()
    except PostgresMissing as exc:
        pytest.skip(str(exc))
    yield cluster
    cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: Any, request: pytest.FixtureRequest) -> str:
    """A fresh, empty database in the session's cluster for this test."""
    import re
    import uuid

    name = re.sub(r"\W", "_", request.node.name.lower())[:40] + "_" + uuid.uuid4().hex[:6]
    return postgres_cluster.create_database(name)


@pytest.fixture(scope="session")
def chroma_server() -> Iterator[Any]:
    """``chroma run`` on a free loopback port, for the whole test session."""
    from local2_testkit.chroma_server import ChromaMissing, TempChroma, chroma_command

    try:
        chroma_command()
    except ChromaMissing as exc:
        pytest.skip(str(exc))
    with TempChroma() as server:
        yield server


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
    import local2.tools.files
    import local2.tools.library_tools
    import local2.tools.memory_tools
    import local2.tools.web  # noqa: F401
    from local2.tools._base import declared_tools

    return {name: schema.parameters for name, schema in declared_tools().items()}
