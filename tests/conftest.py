"""The fixtures every folder's tests may use: isolated data directories and settings, local
servers, the team-scale parts, the browser. Helpers that are not fixtures are in
``tests/kit/``; a folder's own fixtures are in its conftest."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.config import Settings, load_settings
from local2_testkit.web_server import LocalServer, Route
from tests.kit.helpers import SCREENSHOTS, bearer_clients, make_settings

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
    """``--dist loadfile`` hands out the heaviest test files first (tests/kit/scheduling.py)."""
    from tests.kit.scheduling import make_scheduler  # xdist's own modules, for -n runs only

    return make_scheduler(config, log)


@pytest.fixture(scope="session", autouse=True)
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the browser tests keep their screenshots: a folder under pytest's temp folder
    (``--basetemp``), never the repository's tracked files."""
    folder = tmp_path_factory.mktemp("screenshots", numbered=False)
    SCREENSHOTS.append(folder)
    return folder


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


# -- the browser tests' chromium (tests/kit/browser.py: its pages, the app's parts on them) ----


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium under Playwright, one per test module (its pages: ``open_page``)."""
    from playwright.sync_api import sync_playwright

    from tests.kit.browser import BROWSER_ARGS, CHROMIUM

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        yield chromium
        chromium.close()


# -- a team on one served API (the documents' and the search's HTTP tests) -------------------


@pytest.fixture
def team(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Alice and Bob, each with a bearer client, on one agent served over HTTP."""
    # Imported here: the API and the agent, for the tests that ask for a team only.
    from local2.http import create_api
    from local2.service import Agent
    from local2_testkit.ollama_server import FakeOllama, RuleBrain
    from tests.kit.served import Served

    with FakeOllama(RuleBrain()) as fake:
        settings = load_settings(
            overrides={
                "system": {"data_dir": str(tmp_path / "data"), "ollama_host": fake.url},
                "memory": {"embedder": "lexical"},
                "documents": {"max_bytes": 50_000},
            }
        )
        agent = Agent(settings, backend="ollama")
        people = agent.storage.people
        assert people is not None
        tokens = {name: people.add(name) for name in ("alice", "bob")}
        with Served(create_api(agent)) as url, bearer_clients(url, tokens, timeout=120) as c:
            yield {"agent": agent, "alice": c["alice"], "bob": c["bob"], "fake": fake}
        agent.close()
