"""Real search by default: ``provider: auto`` picks the first provider that can serve, falls
back on failure with an event, records which provider answered, and never falls back to mock.

Providers with a configurable endpoint (SearXNG, Brave) answer from loopback servers; ``ddgs``
talks to fixed public hosts through its own client, so its client is replaced by a stub that
replays what the real library returned and raised (tests/fixtures/ddgs/recorded.json, from
scripts/record_ddgs.py).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.config._schema import WebSearchSettings
from local2.errors import ToolError
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from local2.tools._base import configured_tool
from local2.tools._search import CANNED_NOTE, WebSearch, auto_reasons, make_chain
from local2.tools.search.searxng import searxng_answers
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.helpers import local2, make_settings, mock_search_config
from tests.tools.helpers import RECORDED, SEARXNG_BODY, ApiServer, RecordedDDGS

TODAY = dt.date(2026, 5, 31)
DEAD = "http://127.0.0.1:9"  # nothing listens on the discard port
NO_ENV: dict[str, str] = {}


@pytest.fixture
def api() -> Iterator[Callable[..., ApiServer]]:
    """Start loopback servers answering ``reply(request) -> (status, json)``; stop them after."""
    servers: list[ApiServer] = []

    def start(answer: Callable[..., tuple[int, object]]) -> ApiServer:
        servers.append(ApiServer(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def ddgs_search(case: str, query: str = "python asyncio tutorial", **cfg: Any) -> Any:
    settings = WebSearchSettings(provider="ddgs", **cfg)
    chain = make_chain(settings, ddgs_client=RecordedDDGS(case))
    return WebSearch(settings, chain, today=lambda: TODAY)({"query": query})


def test_ddgs_results_are_formatted_with_their_urls() -> None:
    result = ddgs_search("results")
    hits = RECORDED["results"]["returns"]
    assert result.text.startswith("Today's date: 2026-05-31\n\n[1] Title: asyncio — ")
    for i, hit in enumerate(hits, 1):
        assert f"[{i}] Title: {hit['title']}\nSnippet: {hit['body']}\nURL: {hit['href']}" in (
            result.text
        )
    assert result.data == {"provider": "ddgs", "count": 3, "urls": [h["href"] for h in hits]}
    assert CANNED_NOTE not in result.text


def test_ddgs_recorded_errors_read_as_the_design_says() -> None:
    assert ddgs_search("no_results", "zzz").text == "No results found for: zzz"
    with pytest.raises(ToolError, match=r"^search timeout after 15s$"):
        ddgs_search("timeout", timeout_s=15)
    with pytest.raises(ToolError) as info:
        ddgs_search("connect_refused")
    assert str(info.value) == "cannot reach the search engines: the connection was refused"
    assert "ConnectError('error sending request" in info.value.data["detail"]  # kept, for the log


def test_auto_with_no_keys_and_no_searxng_is_ddgs() -> None:
    cfg = WebSearchSettings(searxng_url=DEAD)
    assert [name for name, _ in auto_reasons(cfg, NO_ENV)] == ["ddgs"]
    log: list[dict[str, Any]] = []
    chain = make_chain(cfg, NO_ENV, ddgs_client=RecordedDDGS("results", log))
    found = chain.search("python asyncio tutorial", 5)
    assert found.provider == "ddgs" and len(found.hits) == 3 and not found.fallbacks
    assert log == [{"timeout_s": 15.0}, {"query": "python asyncio tutorial", "max_results": 5}]


def test_auto_prefers_keys_then_a_searxng_that_answers(api: Callable[..., ApiServer]) -> None:
    searxng = api(lambda req: (200, SEARXNG_BODY))
    cfg = WebSearchSettings(searxng_url=searxng.url)
    env = {"TAVILY_API_KEY": "tvly-x", "BRAVE_API_KEY": "brave-x"}
    assert [n for n, _ in auto_reasons(cfg, env)] == ["tavily", "brave", "searxng", "ddgs"]
    assert [n for n, _ in auto_reasons(cfg, {"BRAVE_API_KEY": " "})] == ["searxng", "ddgs"]
    found = make_chain(cfg, NO_ENV).search("llama tool calling", 5)
    assert found.provider == "searxng" and [h.url for h in found.hits] == [
        "https://one.example/a",
        "https://two.example/b",
    ]
    assert searxng_answers(searxng.url) and not searxng_answers(DEAD)


def test_a_failing_provider_falls_back_to_the_next_with_an_event(
    api: Callable[..., ApiServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "brave-secret-123")
    brave = api(lambda req: (429, {"error": "quota"}))
    searxng = api(lambda req: (403, {"error": "json format disabled"}))
    cfg = WebSearchSettings(brave_url=brave.url, searxng_url=searxng.url)
    search = WebSearch(cfg, make_chain(cfg, ddgs_client=RecordedDDGS("results")))
    result = search({"query": "python asyncio tutorial"})
    assert result.data["provider"] == "ddgs" and result.text.count("\nURL: ") == 3
    fallbacks = [payload for subject, payload in result.events if subject == "tool.fallback"]
    assert [(f["failed"], f["next"]) for f in fallbacks] == [
        ("brave", "searxng"),
        ("searxng", "ddgs"),
    ]
    assert fallbacks[0]["error"].startswith("search failed: 429")
    assert "json" in fallbacks[1]["error"]  # SearXNG's own hint: enable the json format
    assert "brave-secret-123" not in json.dumps(fallbacks)
    assert len(brave.requests) == 1 and len(searxng.requests) >= 1


def test_when_every_provider_fails_the_last_error_is_the_result(
    api: Callable[..., ApiServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "k")
    brave = api(lambda req: (500, {}))
    cfg = WebSearchSettings(brave_url=brave.url, searxng_url=DEAD, timeout_s=15)
    search = WebSearch(cfg, make_chain(cfg, ddgs_client=RecordedDDGS("timeout")))
    with pytest.raises(ToolError, match=r"^search timeout after 15s$") as info:
        search({"query": "x"})
    assert [p["failed"] for _, p in info.value.events] == ["brave"]
    assert info.value.data["provider"] == "ddgs"  # never mock
    assert info.value.data["cause"] == "timeout"


def test_every_provider_failing_for_a_lasting_cause_says_no_query_can_succeed(
    api: Callable[..., ApiServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rejected key and then no network: no other words can succeed, and the error says so
    (``data["lasting"]``); a rate limit before no network may pass, so it does not."""
    monkeypatch.setenv("BRAVE_API_KEY", "k")
    refused = api(lambda req: (401, {}))
    cfg = WebSearchSettings(brave_url=refused.url, searxng_url=DEAD)
    search = WebSearch(cfg, make_chain(cfg, ddgs_client=RecordedDDGS("no_network")))
    with pytest.raises(ToolError) as info:
        search({"query": "x"})
    assert info.value.data["cause"] == "no_network" and info.value.data["lasting"] is True
    limited = api(lambda req: (429, {}))
    cfg = WebSearchSettings(brave_url=limited.url, searxng_url=DEAD)
    search = WebSearch(cfg, make_chain(cfg, ddgs_client=RecordedDDGS("no_network")))
    with pytest.raises(ToolError) as info:
        search({"query": "x"})
    assert info.value.data["cause"] == "no_network" and info.value.data["lasting"] is False
    with pytest.raises(ToolError) as info:
        ddgs_search("timeout")
    assert info.value.data["lasting"] is False


def test_mock_is_only_ever_a_configured_choice() -> None:
    assert "mock" not in [n for n, _ in auto_reasons(WebSearchSettings(), {"X": "1"})]
    text = WebSearch(WebSearchSettings(provider="mock"))({"query": "news"}).text
    assert text.startswith(CANNED_NOTE + "\nToday's date: ")


def test_the_payload_records_the_provider_of_each_call(
    tmp_path: Path, api: Callable[..., ApiServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "k")
    brave = api(lambda req: (503, {}))
    settings = make_settings(
        tmp_path, web={"search": {"brave_url": brave.url, "searxng_url": DEAD}}
    )
    cfg = settings.web.search
    tool = configured_tool(
        settings,
        "web_search",
        WebSearch(cfg, make_chain(cfg, ddgs_client=RecordedDDGS("results"))),
        effects="read",
        output="untrusted",
    )
    model = ScriptedChatModel(
        replies=[
            reply("", tool_calls=[{"name": "web_search", "args": {"query": "asyncio"}}]),
            reply("asyncio is Python's library for async/await code."),
        ]
    )
    agent = Agent(settings, chat_model=model, tools=[tool], memory=None, critic=None)
    payload = agent.turns.ask("What is asyncio?", "s1")
    assert payload["tool_calls"][0]["provider"] == "ddgs"
    assert payload["tool_calls"][0]["error"] is None
    fallback = next(e for e in payload["event_log"] if e["subject"] == "tool.fallback")
    assert (fallback["failed"], fallback["next"]) == ("brave", "ddgs")
    events = payload["events"]
    assert events.index("tool.fallback") < events.index("tool.result.web_search")
    assert agent.notices == []  # real search: nothing to warn about


def test_ask_json_with_no_keys_and_no_searxng_searches_with_ddgs(tmp_path: Path) -> None:
    """The real command, the real ddgs client: it is the provider chosen (in tests its only
    route out is a loopback proxy where nothing listens, so the call fails, and says so)."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "web.yaml").write_text(f"search:\n  searxng_url: {DEAD}\n")
    with FakeOllama(RuleBrain()) as server:
        env = {
            "OLLAMA_HOST": server.url,
            "LOCAL2_HOME": str(tmp_path / "home"),
            "LOCAL2_CONFIG": str(conf),
        }
        done = local2("ask", "What major AI news broke this week?", "--json", env=env)
    assert done.returncode == 0, done.stderr
    call = json.loads(done.stdout)["tool_calls"][0]
    assert call["tool"] == "web_search" and call["provider"] == "ddgs"
    assert call["error"] == "cannot reach the search engines: the connection was refused"
    assert "canned" not in done.stderr + done.stdout


def test_with_mock_the_person_is_told_the_results_are_canned(tmp_path: Path) -> None:
    conf = mock_search_config(tmp_path / "conf")
    with FakeOllama(RuleBrain()) as server:
        env = {
            "OLLAMA_HOST": server.url,
            "LOCAL2_HOME": str(tmp_path / "home"),
            "LOCAL2_CONFIG": str(conf),
        }
        done = local2("ask", "What major AI news broke this week?", env=env)
        as_json = local2("ask", "What major AI news broke this week?", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert "Notice: Web search uses the mock provider: canned example results" in done.stderr
    payload = json.loads(as_json.stdout)
    assert payload["tool_calls"][0]["provider"] == "mock"
    assert payload["tool_calls"][0]["result"].startswith(CANNED_NOTE)
    assert "canned example results" in as_json.stderr
