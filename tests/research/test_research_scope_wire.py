"""A run's scope reaches DuckDuckGo's and Brave's own filters on the wire, not only as
parameters: a research run scoped ``past week`` on ``docs.python.org`` searches through the
real ``ddgs`` client (its DuckDuckGo engine pointed at a loopback server that records the
form it posts and answers the page recorded from DuckDuckGo, tests/fixtures/ddgs/) and
through Brave's provider (real httpx, ``web.search.brave_url`` on loopback). Each asserted on
the request the server received: ``df`` (ddgs' ``timelimit``) and ``freshness``, and the
query's ``site:`` operator; the hits on other sites never reach the model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from ddgs.engines import ENGINES
from ddgs.engines.duckduckgo import Duckduckgo

from local2_testkit.ollama_server import FakeOllama
from local2_testkit.research_brain import ResearchBrain
from tests.research.test_research_sources import model_text, run, settings_for
from tests.scholarly_stub import Reply, stub

DDG_PAGE = (
    Path(__file__).parents[1] / "fixtures" / "ddgs" / "duckduckgo_results.html"
).read_bytes()
QUESTION = "python asyncio tutorial"
SCOPE = {"since": "past week", "domains": "docs.python.org"}
ELSEWHERE = ("realpython.com", "superfastpython.com")  # the recorded page's other sites


def search_only() -> dict[str, Any]:
    """One search, then the report: the search's request is what these tests are about."""
    return {
        "goal": QUESTION,
        "steps": [
            {
                "id": "s1",
                "description": "Search",
                "tool": "web_search",
                "args": {"query": QUESTION},
                "requires": [],
            },
            {"id": "s2", "description": "Write", "tool": "compose", "args": {}, "requires": ["s1"]},
        ],
    }


class DuckDuckGoOnLoopback:
    """DuckDuckGo's HTML endpoint on 127.0.0.1: records each form posted to it and answers
    the results page recorded from DuckDuckGo."""

    def __init__(self) -> None:
        self.forms: list[dict[str, list[str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                outer.forms.append(parse_qs(self.rfile.read(size).decode()))
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(DDG_PAGE)))
                self.end_headers()
                self.wfile.write(DDG_PAGE)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/html/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def duckduckgo(monkeypatch: pytest.MonkeyPatch) -> Iterator[DuckDuckGoOnLoopback]:
    """ddgs' one text engine is its DuckDuckGo engine, posting to the loopback server (no
    other engine is left to ask, so nothing leaves the machine; the tests' dead proxy is
    lifted for this client alone)."""
    served = DuckDuckGoOnLoopback()
    loopback = type("LoopbackDuckduckgo", (Duckduckgo,), {"search_url": served.url})
    monkeypatch.setitem(ENGINES, "text", {"duckduckgo": loopback})
    monkeypatch.delenv("DDGS_PROXY")
    try:
        yield served
    finally:
        served.close()


def test_ddgs_posts_timelimit_and_site_to_duckduckgo(
    duckduckgo: DuckDuckGoOnLoopback, tmp_path: Path
) -> None:
    with stub({}) as nothing, FakeOllama(ResearchBrain(plans=[search_only()])) as fake:
        settings = settings_for(fake, nothing, tmp_path / "data")
        settings.web.search.provider = "ddgs"
        payload = run(settings, sources="web", scope=SCOPE)
        asked_model = model_text(fake)
    assert len(duckduckgo.forms) == 1, duckduckgo.forms
    form = duckduckgo.forms[0]
    assert form["df"] == ["w"]  # ddgs' timelimit, as DuckDuckGo reads it
    assert form["q"] == [f"{QUESTION} site:docs.python.org"]
    assert [s["url"] for s in payload["sources"]] == [
        "https://docs.python.org/3/library/asyncio.html"
    ]
    for site in ELSEWHERE:  # sent by the page, outside the scope's sites
        assert site not in asked_model


def test_brave_gets_freshness_and_site_over_http(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "brave-test-key")
    hits = {
        "web": {
            "results": [
                {
                    "title": "asyncio — Asynchronous I/O",
                    "url": "https://docs.python.org/3/library/asyncio.html",
                    "description": "asyncio is a library to write concurrent code.",
                },
                {
                    "title": "Async IO in Python",
                    "url": "https://realpython.com/async-io-python/",
                    "description": "A walkthrough of async IO.",
                },
            ]
        }
    }
    with (
        stub({"/res/v1/web/search": [Reply(json.dumps(hits).encode())]}) as brave,
        FakeOllama(ResearchBrain(plans=[search_only()])) as fake,
    ):
        settings = settings_for(fake, brave, tmp_path / "data")
        settings.web.search.provider = "brave"
        settings.web.search.brave_url = brave.url("/res/v1/web/search")
        today = date.today()
        payload = run(settings, sources="web", scope=SCOPE)
        asked_model = model_text(fake)
    asked = brave.asked("/res/v1/web/search")
    assert len(asked) == 1, brave.paths()
    since, day_after = today - timedelta(weeks=1), today + timedelta(days=1)
    assert asked[0]["freshness"] == [f"{since.isoformat()}to{day_after.isoformat()}"]
    assert asked[0]["q"] == [f"{QUESTION} site:docs.python.org"]
    assert brave.headers("/res/v1/web/search")[0]["x-subscription-token"] == "brave-test-key"
    assert [s["url"] for s in payload["sources"]] == [
        "https://docs.python.org/3/library/asyncio.html"
    ]
    assert "realpython.com" not in asked_model
