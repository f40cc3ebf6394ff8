"""web_search: each provider against a local server speaking its real JSON shape."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from local2.config import load_settings
from local2.config._schema import WebSearchSettings
from local2.errors import ToolError
from local2.tools._registry import built_in_schemas
from local2.tools._search import CANNED_NOTE, WebSearch
from local2.tools._web import web_tools
from local2.tools.search.mock import DEFAULT_MOCK_RESULTS
from tests.tools.helpers import BRAVE_BODY, SEARXNG_BODY, ApiServer

TODAY = dt.date(2026, 5, 31)
KEY = "sk-test-secret-key-123"


@pytest.fixture
def api() -> Iterator[Callable[..., ApiServer]]:
    servers: list[ApiServer] = []

    def start(reply: Callable[..., tuple[int, object]], delay: float = 0.0) -> ApiServer:
        servers.append(ApiServer(reply, delay))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def search(cfg: WebSearchSettings, query: object = "llama tool calling") -> str:
    return WebSearch(cfg, today=lambda: TODAY)({"query": query}).text


EXPECTED_TWO = (
    "Today's date: 2026-05-31\n\n"
    "[1] Title: First result\nSnippet: The first snippet.\nURL: https://one.example/a\n\n"
    "[2] Title: Second result\nSnippet: The second snippet.\nURL: https://two.example/b"
)


# --- mock ----------------------------------------------------------------------------------


def test_mock_default_results_are_plausible_ai_news() -> None:
    text = search(WebSearchSettings(provider="mock"), "What major AI news broke this week?")
    assert text.startswith(f"{CANNED_NOTE}\nToday's date: 2026-05-31\n\n[1] Title: ")
    assert text.count("\nURL: https://") == len(DEFAULT_MOCK_RESULTS)
    assert "AI" in text
    assert text == search(WebSearchSettings(provider="mock"), "What major AI news broke this week?")


def test_mock_results_file_list_and_query_map(tmp_path: Path) -> None:
    listed = tmp_path / "list.json"
    listed.write_text(
        json.dumps(
            [
                {
                    "title": "First result",
                    "snippet": "The first snippet.",
                    "url": "https://one.example/a",
                },
                {
                    "title": "Second result",
                    "snippet": "The second snippet.",
                    "url": "https://two.example/b",
                },
            ]
        )
    )
    assert search(WebSearchSettings(provider="mock", mock_results=listed)) == (
        f"{CANNED_NOTE}\n{EXPECTED_TWO}"
    )
    mapped = tmp_path / "map.json"
    mapped.write_text(
        json.dumps(
            {
                "queries": {
                    "gemma": [{"title": "G", "snippet": "s", "url": "http://127.0.0.1:1/p"}]
                },
                "default": [],
            }
        )
    )
    cfg = WebSearchSettings(provider="mock", mock_results=mapped)
    assert "URL: http://127.0.0.1:1/p" in search(cfg, "LoCAL2 Gemma tool calling")
    assert search(cfg, "something else") == f"{CANNED_NOTE}\nNo results found for: something else"


def test_max_results_is_respected() -> None:
    text = search(WebSearchSettings(provider="mock", max_results=1))
    assert "[1] Title:" in text and "[2]" not in text


@pytest.mark.parametrize("query", [None, "", "   ", 42])
def test_missing_query(query: object) -> None:
    with pytest.raises(ToolError, match=r"^missing query argument$"):
        search(WebSearchSettings(), query)
    with pytest.raises(ToolError, match=r"^missing query argument$"):
        WebSearch(WebSearchSettings())({})


def test_control_characters_stripped_from_results(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(
        json.dumps(
            [
                {
                    "title": "Bad\x1b[2J title",
                    "snippet": "line\x00one\nline\u202etwo",
                    "url": "https://x.example/",
                }
            ]
        )
    )
    text = search(WebSearchSettings(provider="mock", mock_results=path))
    assert "[1] Title: Bad[2J title\nSnippet: lineone linetwo\n" in text


# --- SearXNG -----------------------------------------------------------------------------


def test_searxng_json_api(api) -> None:
    server = api(lambda req: (200, SEARXNG_BODY))
    text = search(WebSearchSettings(provider="searxng", searxng_url=server.url + "/"))
    assert text == EXPECTED_TWO
    req = server.requests[0]
    assert req["path"] == "/search"
    assert req["query"] == {"q": "llama tool calling", "format": "json"}


def test_searxng_403_explains_json_format(api) -> None:
    server = api(lambda req: (403, {"error": "forbidden"}))
    with pytest.raises(ToolError) as err:
        search(WebSearchSettings(provider="searxng", searxng_url=server.url))
    assert str(err.value).startswith("search failed: 403 (")
    assert "`json` under `search.formats`" in str(err.value) and "settings.yml" in str(err.value)


def test_searxng_empty_results(api) -> None:
    server = api(lambda req: (200, {**SEARXNG_BODY, "results": [], "number_of_results": 0}))
    cfg = WebSearchSettings(provider="searxng", searxng_url=server.url)
    assert search(cfg, "zzqx nothing") == "No results found for: zzqx nothing"


@pytest.mark.parametrize("status", [500, 502])
def test_searxng_server_error(api, status: int) -> None:
    server = api(lambda req: (status, {}))
    with pytest.raises(ToolError, match=rf"^search failed: {status}$"):
        search(WebSearchSettings(provider="searxng", searxng_url=server.url))


def test_searxng_timeout(api) -> None:
    server = api(lambda req: (200, SEARXNG_BODY), delay=2.0)
    start = time.monotonic()
    with pytest.raises(ToolError, match=r"^search timeout after 0.5s$"):
        search(WebSearchSettings(provider="searxng", searxng_url=server.url, timeout_s=0.5))
    assert time.monotonic() - start < 1.9


def test_unreachable_provider_is_a_clear_error() -> None:
    cfg = WebSearchSettings(provider="searxng", searxng_url="http://127.0.0.1:9", timeout_s=2)
    with pytest.raises(ToolError, match=r"^cannot reach SearXNG at http://127\.0\.0\.1:9: the "):
        search(cfg)


# --- Brave -------------------------------------------------------------------------------


def test_brave_api(api, monkeypatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    server = api(lambda req: (200, BRAVE_BODY))
    cfg = WebSearchSettings(
        provider="brave", brave_url=server.url + "/res/v1/web/search", max_results=3
    )
    assert search(cfg) == EXPECTED_TWO
    req = server.requests[0]
    assert req["path"] == "/res/v1/web/search"
    assert req["headers"]["x-subscription-token"] == KEY
    assert req["query"] == {"q": "llama tool calling", "count": "3"}


def test_brave_no_web_section_is_no_results(api, monkeypatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    server = api(lambda req: (200, {"type": "search", "query": {"original": "x"}}))
    assert search(WebSearchSettings(provider="brave", brave_url=server.url), "x") == (
        "No results found for: x"
    )


@pytest.mark.parametrize(
    ("status", "explained"),
    [(401, "check BRAVE_API_KEY"), (403, "forbidden"), (429, "rate limit"), (500, None)],
)
def test_brave_http_failures_never_show_the_key(api, monkeypatch, status: int, explained) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    server = api(lambda req: (status, {"error": {"detail": f"bad token {KEY}"}}))
    with pytest.raises(ToolError) as err:
        search(WebSearchSettings(provider="brave", brave_url=server.url))
    message = str(err.value)
    assert message.startswith(f"search failed: {status}")
    assert KEY not in message
    if explained:
        assert explained in message
    else:
        assert message == f"search failed: {status}"


def test_brave_without_key(monkeypatch) -> None:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    with pytest.raises(ToolError, match="BRAVE_API_KEY is not set"):
        search(WebSearchSettings(provider="brave", brave_url="http://127.0.0.1:9"))


# --- Tavily ------------------------------------------------------------------------------

TAVILY_BODY = {
    "query": "llama tool calling",
    "answer": None,
    "images": [],
    "results": [
        {
            "title": "First result",
            "url": "https://one.example/a",
            "content": "The first snippet.",
            "score": 0.91,
            "raw_content": None,
        },
        {
            "title": "Second result",
            "url": "https://two.example/b",
            "content": "The second snippet.",
            "score": 0.80,
            "raw_content": None,
        },
    ],
    "response_time": 1.2,
}


def test_tavily_with_key(api, monkeypatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    server = api(lambda req: (200, TAVILY_BODY))
    cfg = WebSearchSettings(provider="tavily", tavily_url=server.url, max_results=4)
    assert search(cfg) == EXPECTED_TWO
    req = server.requests[0]
    assert (req["method"], req["path"]) == ("POST", "/search")
    assert req["headers"]["authorization"] == f"Bearer {KEY}"
    assert req["json"]["query"] == "llama tool calling"
    assert req["json"]["max_results"] == 4
    assert req["json"]["search_depth"] == "basic"


def test_tavily_keyless_mode(api, monkeypatch) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    server = api(lambda req: (200, TAVILY_BODY))
    assert search(WebSearchSettings(provider="tavily", tavily_url=server.url)) == EXPECTED_TWO
    headers = server.requests[0]["headers"]
    assert "authorization" not in headers
    assert headers["x-tavily-access-mode"] == "keyless"


@pytest.mark.parametrize(
    ("status", "explained"),
    [(401, "check TAVILY_API_KEY"), (403, "forbidden"), (429, "rate limit"), (500, None)],
)
def test_tavily_http_failures(api, monkeypatch, status: int, explained) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    server = api(lambda req: (status, {"detail": {"error": f"Unauthorized: {KEY}"}}))
    with pytest.raises(ToolError) as err:
        search(WebSearchSettings(provider="tavily", tavily_url=server.url))
    message = str(err.value)
    assert message.startswith(f"search failed: {status}")
    assert KEY not in message
    if explained:
        assert explained in message


def test_tavily_keyless_limit(api, monkeypatch) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    envelope = {"error": {"code": "keyless_limit", "message": "limit reached", "window": "day"}}
    server = api(lambda req: (429, envelope))
    with pytest.raises(ToolError, match=r"^search failed: 429 \(keyless Tavily limit"):
        search(WebSearchSettings(provider="tavily", tavily_url=server.url))


def test_tavily_timeout_and_empty(api, monkeypatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    slow = api(lambda req: (200, TAVILY_BODY), delay=2.0)
    with pytest.raises(ToolError, match=r"^search timeout after 0.5s$"):
        search(WebSearchSettings(provider="tavily", tavily_url=slow.url, timeout_s=0.5))
    empty = api(lambda req: (200, {**TAVILY_BODY, "results": []}))
    assert search(WebSearchSettings(provider="tavily", tavily_url=empty.url), "q") == (
        "No results found for: q"
    )


# --- the Tool objects --------------------------------------------------------------------


def test_web_tools_take_schemas_from_config(tmp_path: Path) -> None:
    settings = load_settings(
        overrides={"system": {"data_dir": str(tmp_path)}, "web": {"search": {"provider": "mock"}}}
    )
    tools = {t.name: t for t in web_tools(settings)}
    assert set(tools) == {"web_search", "web_fetch"}
    for name, tool in tools.items():
        schema = settings.generator.tool_schema(name) or built_in_schemas().get(name)
        assert schema is not None
        assert tool.description == schema.description
        assert tool.parameters == schema.parameters
    assert tools["web_search"].parameters["required"] == ["query"]
    result = tools["web_search"].run({"query": "AI news"}, None)
    today = dt.date.today().isoformat()
    assert result.text.startswith(f"{CANNED_NOTE}\nToday's date: {today}\n\n[1] Title: ")
    assert result.data["provider"] == "mock"
    assert tools["web_fetch"].timeout_s is not None
    assert tools["web_fetch"].timeout_s > settings.web.fetch.timeout_s
