"""A failed search reaches the person as one plain sentence: what failed, why, what to do.

Each failure is the real client's: ``ddgs`` replays what the real library raised on a machine
with no network (tests/fixtures/ddgs/recorded.json, ``no_network``: a Brave query URL and
Rust debug text) or runs for real through a loopback proxy where nothing listens (see
``tests/conftest.py``); httpx's providers meet the ``socket.gaierror`` the operating system
raises with no network (name lookup patched to fail as it does then: nothing is asked of any
resolver), a loopback port where nothing listens, or a loopback API answering 401 or 429.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.config._schema import WebSearchSettings
from local2.errors import ToolError
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from local2.service.doctor import run_checks
from local2.tools._base import configured_tool
from local2.tools._search import WebSearch, make_chain
from local2.tools.search.ddgs import DdgsProvider
from tests.kit.helpers import make_settings
from tests.tools.helpers import RECORDED, ApiServer, RecordedDDGS

DOCTOR = "`local2 doctor` checks the search."
BRAVE = "https://api.search.brave.com/res/v1/web/search"  # never reached: no lookup succeeds


def plain(text: str) -> None:
    """One line for a person: no query URL, no client debug text, no Markdown marks (every
    underscore inside a backticked setting name)."""
    assert "\n" not in text
    assert not re.search(r"https?://[^\s)]*[?&]q=", text), text  # the engine's own query
    assert "Query {" not in text and "Name(" not in text and "Error(" not in text, text
    assert ">" not in text and "\\" not in text and "**" not in text, text
    outside_code = re.sub(r"`[^`]*`", "", text)
    assert "_" not in outside_code, text


def failure(search: Any, query: str = "green tea health benefits") -> ToolError:
    with pytest.raises(ToolError) as info:
        search({"query": query})
    plain(str(info.value))
    plain(info.value.fix)
    assert info.value.fix.endswith(DOCTOR)
    return info.value


def ddgs(case: str) -> WebSearch:
    cfg = WebSearchSettings(provider="ddgs")
    return WebSearch(cfg, make_chain(cfg, ddgs_client=RecordedDDGS(case)))


@pytest.fixture
def no_name_lookups(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Name lookups fail as they do on a machine with no network (EAI_AGAIN); loopback
    addresses still resolve (other checks talk to 127.0.0.1)."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def fail(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host in ("127.0.0.1", "localhost", "::1"):
            return real(host, *args, **kwargs)
        asked.append(str(host))
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    yield asked


def test_ddgs_offline_says_no_network_and_points_to_what_works_offline() -> None:
    raw = RECORDED["no_network"]["message"]
    assert "?q=" in raw and "Query { name: Name(" in raw  # what the library really says
    error = failure(ddgs("no_network"))
    assert str(error) == "no network: this machine could not look up the search engines"
    assert "`local2 research --sources library`" in error.fix  # the library
    assert "`search.provider: corpus`" in error.fix  # the offline corpus
    assert error.data["cause"] == "no_network"
    assert "Query { name: Name(" in error.data["detail"]  # kept whole, for the event log


def test_the_real_ddgs_client_refused_by_its_proxy_says_so() -> None:
    provider = DdgsProvider(3)  # the real DDGS; its only route is the dead loopback proxy
    cfg = WebSearchSettings(provider="ddgs", timeout_s=3)
    error = failure(WebSearch(cfg, provider))
    assert str(error) == "cannot reach the search engines: the connection was refused"
    assert "proxy or firewall" in error.fix
    assert "Connection refused" in error.data["detail"]


def test_httpx_providers_with_no_network(no_name_lookups: list[str]) -> None:
    brave = WebSearchSettings(provider="brave", brave_url=BRAVE, timeout_s=3)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BRAVE_API_KEY", "k")
        error = failure(WebSearch(brave))
    assert str(error) == "no network: this machine could not look up the Brave Search API"
    assert "Temporary failure in name resolution" in error.data["detail"]
    searxng = WebSearchSettings(provider="searxng", searxng_url="http://searxng.lan:8080")
    error = failure(WebSearch(searxng))
    assert str(error) == (
        "cannot reach SearXNG at http://searxng.lan:8080: its address could not be looked up "
        "(no network, or a wrong address)"
    )
    assert error.fix.startswith("Start SearXNG, or correct `search.searxng_url` in web.yaml.")
    assert no_name_lookups == ["api.search.brave.com", "searxng.lan"]


def test_a_searxng_that_is_not_running_is_named() -> None:
    cfg = WebSearchSettings(provider="searxng", searxng_url="http://127.0.0.1:9")
    error = failure(WebSearch(cfg))
    assert str(error) == (
        "cannot reach SearXNG at http://127.0.0.1:9: the connection was refused (is it running?)"
    )
    assert error.data["cause"] == "refused"


@pytest.mark.parametrize(
    ("status", "said", "fix"),
    [
        (401, "search failed: 401 (the API key was rejected: check BRAVE_API_KEY)", "Check `BRAVE"),
        (429, "search failed: 429 (rate limit or quota exceeded: try again later)", "Wait a few"),
    ],
)
def test_refused_keys_and_rate_limits_say_what_to_do(
    monkeypatch: pytest.MonkeyPatch, status: int, said: str, fix: str
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "brave-secret")
    server = ApiServer(lambda req: (status, {"error": "brave-secret is not valid"}))
    try:
        with pytest.raises(ToolError) as info:
            WebSearch(WebSearchSettings(provider="brave", brave_url=server.url))({"query": "x"})
    finally:
        server.close()
    assert str(info.value) == said and info.value.fix.startswith(fix)
    assert "brave-secret" not in str(info.value) + info.value.fix


def test_the_turn_shows_the_sentence_and_the_event_log_keeps_the_detail(tmp_path: Path) -> None:
    """A model that cannot call tools natively: the person reads which tool failed, why and
    what to do; the client's own text is in the tool.result event only."""
    settings = make_settings(tmp_path)
    cfg = settings.web.search.model_copy(update={"provider": "ddgs"})
    tool = configured_tool(
        settings, "web_search", ddgs("no_network"), effects="read", output="untrusted"
    )
    model = ScriptedChatModel(
        replies=[
            reply("", tool_calls=[{"name": "web_search", "args": {"query": "AI news"}}]),
            reply("Big AI news: a model was released."),  # a guess: never shown
        ]
    )
    assert cfg.provider == "ddgs"
    agent = Agent(
        settings, chat_model=model, native_tools=False, tools=[tool], memory=None, critic=None
    )
    payload = agent.turns.ask("What major AI news broke this week?", "s1")
    agent.close()
    answer = payload["answer"]
    assert "no network: this machine could not look up the search engines" in answer
    assert "`local2 research --sources library`" in answer and "Big AI news" not in answer
    for line in answer.splitlines()[1:]:
        plain(line.removeprefix("- web_search failed: ").replace("What to do: ", ""))
    (call,) = payload["tool_calls"]
    assert "?q=" not in str(call) and "Query {" not in str(call)
    result = next(e for e in payload["event_log"] if e["subject"] == "tool.result.web_search")
    assert result["cause"] == "no_network" and "Query { name: Name(" in result["detail"]


def test_doctor_really_searches_and_says_no_network(
    tmp_path: Path, no_name_lookups: list[str]
) -> None:
    settings = make_settings(tmp_path, web={"search": {"provider": "brave", "brave_url": BRAVE}})
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BRAVE_API_KEY", "k")
        search = {c.name: c for c in run_checks(settings)}["web search"]
    assert search.status == "fail"
    assert search.detail.startswith("no network: this machine could not look up the Brave")
    assert "corpus" in search.fix and "local2 doctor" not in search.fix  # said in doctor itself
    assert no_name_lookups == ["api.search.brave.com"]  # one real attempt, refused by the OS
