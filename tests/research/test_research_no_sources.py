"""No sources, no report: a run that gathered no usable source ends ``no_sources``, says what it
tried and the one next step that fits the cause, and no model writes from nothing.

Real parts throughout: the real ChatOllama against the Ollama-protocol server, the real SQLite
checkpointer, search as it fails offline (``ddgs`` replaying what the real library raised on a
machine with no network, tests/fixtures/ddgs/recorded.json), the real ``ddgs`` through a proxy
where nothing listens (a refused connection, see ``tests/conftest.py``), Brave's provider
refused by a loopback server (real httpx), the person's real (empty) library, the HTTP API
over a socket and the MCP SDK's client at ``/mcp``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from local2.config import load_settings
from local2.errors import RunNotReady
from local2.service.agent import Agent
from local2.service.research import Research
from local2.tools.search import ddgs
from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from local2_testkit.research_web import LoopbackWeb, load_pages, research_overrides
from tests.kit.browser import app_served
from tests.kit.mcp_clients import http_session, structured
from tests.tools.helpers import RecordedDDGS

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "extraction_corpus" / "pages"
QUESTION = "What are the health benefits of green tea?"


@pytest.fixture
def web() -> Iterator[LoopbackWeb]:
    with LoopbackWeb(load_pages(CORPUS)) as served:
        yield served


def overrides(fake: FakeOllama, web: LoopbackWeb, tmp_path: Path, **search: Any) -> dict:
    settings = research_overrides(web, tmp_path / "data")
    settings["system"]["ollama_host"] = fake.url
    settings["generator"] = {"backend": "ollama"}
    settings["memory"] = {"enabled": False}
    settings["research"].update(max_rounds=1)
    settings["web"]["search"].update(search)
    return settings


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyless ddgs fails as the real library does on a machine with no network."""
    monkeypatch.setattr(ddgs, "_ddgs_client", RecordedDDGS("no_network"))


def offline(fake: FakeOllama, web: LoopbackWeb, tmp_path: Path) -> Research:
    """Research whose web search is keyless ddgs (failing, see ``no_network``)."""
    return Research(load_settings(overrides=overrides(fake, web, tmp_path, provider="ddgs")))


@pytest.mark.usefixtures("no_network")
def test_no_network_ends_no_sources_with_what_was_tried_and_the_library_or_corpus_next(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    brain = ResearchBrain()
    with FakeOllama(brain) as fake:
        research = offline(fake, web, tmp_path)
        payload = research.run(QUESTION)
        listed = research.runs(5)
        stored = research.payload(str(payload["run_id"]))
        with pytest.raises(RunNotReady) as refused:
            list(research.followup(str(payload["run_id"]), "And black tea?"))
        research.close()
    assert payload["status"] == "no_sources" and payload["sources"] == []
    found = payload["no_sources"]
    assert found is not None and found["cause"] == "no_network"
    said = ": no network: this machine could not look up the search engines"
    assert f'searched the web for "{QUESTION}"{said}' in found["tried"]
    assert all(t.endswith(said) for t in found["tried"]), found["tried"]  # each search tried
    assert "library" in found["next_step"] and "`corpus`" in found["next_step"]
    # No model text: the model was asked for plans, never for a report, and nothing graded it.
    assert "compose" not in brain.requests and "grade" not in brain.requests
    assert payload["critique"] is None
    report = payload["report"]
    assert report.startswith(f"# {QUESTION}\n\n**No report: no source could be gathered")
    assert "What was tried:" in report and f"**Next step:** {found['next_step']}" in report
    assert "://" not in report  # no engine's query URL reaches the person
    compose = [s for s in payload["steps"] if s["tool"] == "compose"]
    assert compose and all(s["status"] == "skipped" for s in compose)
    assert listed[0]["status"] == "no_sources" and stored["status"] == "no_sources"
    assert "finished with no source" in str(refused.value)  # no report to follow up on


@pytest.mark.usefixtures("no_network")
def test_no_network_stops_searching_at_once_however_many_rounds_are_left(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    """No other words can reach a web that cannot be reached: after the first failed search
    the model is asked for no other plan and no gaps, and the run ends ``no_sources``."""
    brain = ResearchBrain()
    with FakeOllama(brain) as fake:
        settings = overrides(fake, web, tmp_path, provider="ddgs")
        settings["research"].update(max_rounds=3)
        research = Research(load_settings(overrides=settings))
        payload = research.run(QUESTION)
        research.close()
    assert payload["status"] == "no_sources"
    assert brain.requests == {"plan": 1}  # the first plan only: no replan, no reflection
    searches = [s for s in payload["steps"] if s["tool"] == "web_search"]
    assert [s["status"] for s in searches] == ["failed"]
    assert searches[0]["calls"][0].get("lasting") is True
    assert [p["origin"] for p in payload["plan"]] == ["model", "no-tools"]
    why = payload["plan"][-1].get("why") or ""
    assert why.startswith("The search cannot work from here (no network: ") and why.endswith(
        "so no other search is tried."
    ), why
    assert len(payload["no_sources"]["tried"]) == 1  # type: ignore[index]


def test_a_failure_that_may_pass_is_still_replanned(web: LoopbackWeb, tmp_path: Path) -> None:
    """A server's error (503) is not lasting: the model plans other words, as before."""
    web.search_failures = [503] * 10
    brain = ResearchBrain()
    with FakeOllama(brain) as fake, pytest.MonkeyPatch.context() as env:
        env.setenv("BRAVE_API_KEY", "not-a-real-key")
        settings = overrides(fake, web, tmp_path, provider="brave", brave_url=f"{web.url}/search")
        research = Research(load_settings(overrides=settings))
        payload = research.run(QUESTION)
        research.close()
    assert payload["status"] == "no_sources"
    assert brain.requests["plan"] >= 2  # replanned by the model
    searches = [s for s in payload["steps"] if s["tool"] == "web_search"]
    assert len(searches) >= 2 and not any(c.get("lasting") for s in searches for c in s["calls"])


def test_my_library_only_with_an_empty_library_says_so_and_what_to_do(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    brain = ResearchBrain()
    with FakeOllama(brain) as fake:
        research = Research(load_settings(overrides=overrides(fake, web, tmp_path)))
        payload = research.run(QUESTION, sources="library")
        research.close()
    assert not web.searches()  # the library alone: no connection at all
    assert payload["status"] == "no_sources"
    found = payload["no_sources"]
    assert found is not None and found["cause"] == "empty_library"
    assert found["tried"] == [f'searched your library for "{QUESTION}": your library is empty']
    step = payload["steps"][0]  # the step says so in its own words, once
    assert step["error"] == "Your library is empty: there is nothing in it to search", step
    # Nothing else is tried: no other search of an empty library can find anything.
    assert [p["origin"] for p in payload["plan"]] == ["model", "no-tools"]
    assert payload["plan"][-1].get("why") == (
        "Your library is empty, so no other search of it can find anything."
    )
    assert brain.requests["plan"] == 1
    assert "Research on the web first" in found["next_step"]
    assert "local2 library import" in found["next_step"]
    report = payload["report"]
    assert "try again later" not in report and "web_search failed" not in report
    assert "compose" not in brain.requests


def test_a_provider_that_refused_names_the_key_to_check(web: LoopbackWeb, tmp_path: Path) -> None:
    web.search_failures = [401] * 10
    brain = ResearchBrain()
    with FakeOllama(brain) as fake, pytest.MonkeyPatch.context() as env:
        env.setenv("BRAVE_API_KEY", "not-a-real-key")
        settings = overrides(fake, web, tmp_path, provider="brave", brave_url=f"{web.url}/search")
        research = Research(load_settings(overrides=settings))
        payload = research.run(QUESTION)
        research.close()
    assert len(web.searches()) == 1  # Brave was asked once, through the loopback: 401
    assert brain.requests["plan"] == 1  # a rejected key: no other words are tried
    found = payload["no_sources"]
    assert payload["status"] == "no_sources" and found is not None
    assert found["cause"] == "refused"
    assert found["next_step"].startswith("Check `BRAVE_API_KEY`")  # the key, never its value
    assert "not-a-real-key" not in json.dumps(payload)
    said = ": search failed: 401 (the API key was rejected: check BRAVE_API_KEY)"
    assert f'searched the web for "{QUESTION}"{said}' in found["tried"], found["tried"]


def test_a_refused_connection_names_the_network_settings_to_check(
    web: LoopbackWeb, tmp_path: Path
) -> None:
    """The real ddgs through a proxy where nothing listens: refused, not "no network"."""
    with FakeOllama(ResearchBrain()) as fake:
        research = offline(fake, web, tmp_path)
        payload = research.run(QUESTION)
        research.close()
    found = payload["no_sources"]
    assert payload["status"] == "no_sources" and found is not None
    assert found["cause"] == "refused"
    said = ": cannot reach the search engines: the connection was refused"
    assert f'searched the web for "{QUESTION}"{said}' in found["tried"], found["tried"]
    assert "proxy or firewall" in found["next_step"]


@pytest.mark.usefixtures("no_network")
def test_the_api_and_mcp_show_no_sources(web: LoopbackWeb, tmp_path: Path) -> None:
    with FakeOllama(ResearchBrain()) as fake:
        settings = overrides(fake, web, tmp_path, provider="ddgs")
        agent = Agent(load_settings(overrides=settings), backend="ollama")
        with app_served(agent, ui=False) as url:
            with httpx.Client(base_url=url, timeout=120) as client:
                with client.stream("POST", "/research", json={"question": QUESTION}) as response:
                    lines = [line for line in response.iter_lines() if line.startswith("data: ")]
                done = json.loads(lines[-1].removeprefix("data: "))
                stored = client.get(f"/research/{done['run_id']}").json()
                runs = client.get("/research").json()["runs"]

            async def by_mcp() -> tuple[dict[str, Any], dict[str, Any], list[str], str]:
                async with http_session(f"{url}/mcp") as session:
                    args = {"question": QUESTION, "max_rounds": 1, "clarify": "never"}
                    result = structured(await session.call_tool("research", args))
                    status = structured(
                        await session.call_tool("research_status", {"run_id": result["run_id"]})
                    )
                    listed = [str(r.uri) for r in (await session.list_resources()).resources]
                    read = await session.read_resource(result["resource"])
                    return result, status, listed, getattr(read.contents[0], "text", "")

            mcp, status, listed, read = anyio.run(by_mcp)
        agent.close()
    assert done["status"] == stored["status"] == runs[0]["status"] == "no_sources"
    assert stored["no_sources"]["cause"] == "no_network"
    assert mcp["status"] == "no_sources" and "**Next step:**" in mcp["report"]
    # The cause and the next step as fields, as the HTTP payload has them, in both tools.
    assert mcp["no_sources"]["cause"] == status["no_sources"]["cause"] == "no_network"
    assert mcp["no_sources"]["next_step"] == stored["no_sources"]["next_step"]
    assert mcp["no_sources"]["tried"] == stored["no_sources"]["tried"]
    assert status["status"] == "no_sources"
    # Not listed as a report (it has none); read by its URI, it is the notice.
    assert not [u for u in listed if u.startswith("local2://research/")], listed
    assert read == mcp["report"]
