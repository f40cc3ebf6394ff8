"""Hostile pages cannot stall or bloat the server, and a timed-out tool call is stopped.

The pages are served by a real HTTP server on 127.0.0.1 and fetched through the real graph
(scripted model, real web_fetch, real extraction worker); memory is this process's peak
resident set over each turn (the kernel's high-water mark, reset before the turn).
"""

from __future__ import annotations

import gzip
import os
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local2.config._schema import WebFetchSettings
from local2.errors import ToolError
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from local2.tools._base import Tool, ToolContext
from local2.tools._extract_worker import POOL
from local2.tools._web_fetch import WebFetch
from local2_testkit.rss import peak_rss
from local2_testkit.web_server import LocalServer, gzip_bomb, send, send_encoded
from tests.kit.helpers import make_settings
from tests.tools.helpers import text_of

NORMAL = (
    b"<html><head><title>Kelsby harbour</title></head><body><nav>Home News</nav><article>"
    b"<h1>Harbour town keeps its bridge</h1><p>Residents of Kelsby voted on Tuesday to repair "
    b"the iron swing bridge that has crossed the harbour mouth since 1894.</p><p>The repair "
    b"will close the bridge to cars for eighteen months while engineers replace the pivot "
    b"bearing.</p></article><footer>Contact</footer></body></html>"
)


@pytest.fixture(scope="module")
def hostile_server() -> Iterator[LocalServer]:
    server = LocalServer(
        {
            "/bomb": send_encoded(gzip_bomb(), "gzip"),
            "/spans": send(b"<html><body>" + b"<span>x</span>" * 140_000 + b"</body></html>"),
            "/paragraphs": send(b"<html><body>" + b"<p>" * 700_000 + b"</body></html>"),
            "/normal": send(NORMAL),
        }
    )
    yield server
    server.close()


def fetch_turn(agent: Agent, url: str, session: str) -> dict[str, Any]:
    """One turn in which the model fetches ``url``; the tool call's record."""
    payload = agent.turns.ask(f"What does {url} say?", session)
    [call] = payload["tool_calls"]
    return call


def test_hostile_pages_end_in_time_with_bounded_memory(
    tmp_path: Path, hostile_server: LocalServer
) -> None:
    pages = ["/normal", "/bomb", "/spans", "/paragraphs", "/normal"]
    replies = []
    for path in pages:
        call = {"name": "web_fetch", "args": {"url": hostile_server.url(path)}}
        replies += [reply("", tool_calls=[call]), reply("Done.")]
    settings = make_settings(
        tmp_path,
        generator={"enabled_tools": ["web_fetch"]},
        web={"fetch": {"allow_hosts": ["127.0.0.1"], "timeout_s": 15}},
    )
    agent = Agent(settings, chat_model=ScriptedChatModel(replies=replies), memory=None, critic=None)
    tool_timeout = agent.services.tools["web_fetch"].timeout_s
    assert tool_timeout is not None
    try:
        fetch_turn(agent, hostile_server.url("/normal"), "warm-up")  # imports, first worker
        results = {}
        for i, path in enumerate(pages[1:]):
            started = time.monotonic()
            with peak_rss() as memory:
                call = fetch_turn(agent, hostile_server.url(path), f"s{i}")
            elapsed = time.monotonic() - started
            results[path] = call
            assert elapsed < tool_timeout, (path, elapsed)
            assert memory.added_mb < 100, (path, memory.added_mb)
            assert not (call["error"] or "").startswith("tool timeout"), call
    finally:
        agent.close()
    assert "decompression bomb" in results["/bomb"]["error"]
    assert "xxxxxxxx" in results["/spans"]["result"]
    assert results["/paragraphs"]["error"] is None
    assert "swing bridge that has crossed the harbour mouth" in results["/normal"]["result"]
    assert "Home News" not in results["/normal"]["result"]


# --- compressed bodies --------------------------------------------------------------------


def fetcher(**cfg: Any) -> WebFetch:
    return WebFetch(WebFetchSettings(**{"allow_hosts": ["127.0.0.1"], "timeout_s": 10, **cfg}))


def test_compressed_pages_are_decoded(serve) -> None:
    raw_deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    server = serve(
        {
            "/gz": send_encoded(gzip.compress(NORMAL), "gzip"),
            "/zlib": send_encoded(zlib.compress(NORMAL), "deflate"),
            "/raw": send_encoded(raw_deflate.compress(NORMAL) + raw_deflate.flush(), "deflate"),
        }
    )
    f = fetcher()
    for path in ("/gz", "/zlib", "/raw"):
        body = text_of(f({"url": server.url(path)}).text)
        assert "swing bridge that has crossed the harbour mouth" in body, path
    assert server.seen[0][1]["Accept-Encoding"] == "gzip, deflate"


def test_large_compressed_page_is_cut_not_refused(serve) -> None:
    import random

    rng = random.Random(7)
    words = [f"w{rng.randrange(50_000)}" for _ in range(250_000)]  # ~1.7 MB, compresses ~2.5x
    page = ("<html><body><p>" + " ".join(words) + "</p></body></html>").encode()
    server = serve({"/big": send_encoded(gzip.compress(page), "gzip")})
    result = fetcher(max_bytes=500_000)({"url": server.url("/big")})
    assert result.data["truncated_bytes"] is True
    assert result.data["bytes"] == 500_000


def test_unknown_encoding_and_corrupt_gzip_are_errors(serve) -> None:
    server = serve(
        {
            "/br": send_encoded(b"\x1b\x00\x00", "br"),
            "/bad": send_encoded(b"\x1f\x8b\x08\x00not gzip at all", "gzip"),
        }
    )
    with pytest.raises(ToolError, match=r"^fetch error: unsupported content encoding 'br'"):
        fetcher()({"url": server.url("/br")})
    with pytest.raises(ToolError, match=r"^fetch error: cannot decode the response"):
        fetcher()({"url": server.url("/bad")})


# --- timeouts stop the work ----------------------------------------------------------------

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}
URL = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}
# 96k tags: under the element cap, and trafilatura takes seconds (9 s measured here).
SLOW_PAGE = b"<html><body>" + b"<div><p>Some words in a sentence.</p></div>" * 24_000


def agent_with(tmp_path: Path, tool: Tool) -> Agent:
    call = {"name": tool.name, "args": {"text": "x"}}
    model = ScriptedChatModel(replies=[reply("", tool_calls=[call]), reply("Done.")])
    settings = make_settings(tmp_path)
    return Agent(settings, chat_model=model, tools=[tool], memory=None, critic=None)


def test_timed_out_call_is_cancelled_and_its_thread_ends(tmp_path: Path) -> None:
    ended = threading.Event()
    seen: list[ToolContext] = []

    def patient(args: Any, ctx: ToolContext) -> str:
        seen.append(ctx)
        try:
            while not ctx.cancel.wait(0.01):
                pass
            return "stopped"
        finally:
            ended.set()

    agent = agent_with(tmp_path, Tool("patient", "waits", TEXT, patient, timeout_s=0.3))
    payload = agent.turns.ask("wait for it", "s1")
    agent.close()
    [call] = payload["tool_calls"]
    assert call["error"] == "tool timeout after 0.3s"
    assert ended.is_set()  # the thread had ended when the turn went on
    assert seen[0].query == "wait for it"
    result = next(e for e in payload["event_log"] if e["subject"] == "tool.result.patient")
    assert result["stopped"] is True


def test_a_tool_that_ignores_cancel_is_reported_not_stopped(tmp_path: Path) -> None:
    release = threading.Event()

    def stubborn(args: Any, ctx: ToolContext) -> str:
        release.wait(10)
        return "late"

    agent = agent_with(tmp_path, Tool("stubborn", "ignores", TEXT, stubborn, timeout_s=0.2))
    try:
        payload = agent.turns.ask("go", "s1")
    finally:
        release.set()
        agent.close()
    result = next(e for e in payload["event_log"] if e["subject"] == "tool.result.stubborn")
    assert result["stopped"] is False
    assert payload["tool_calls"][0]["error"] == "tool timeout after 0.2s"


def test_graph_timeout_kills_the_extraction_worker(tmp_path: Path, serve) -> None:
    """A page slow to extract (under the element cap): the call times out in the graph
    before the fetch's own deadline, and the worker extracting it is killed."""
    server = serve({"/slow": send(SLOW_PAGE)})
    fetch = fetcher(timeout_s=60, max_elements=200_000)
    tool = Tool("web_fetch", "fetch", URL, fetch, timeout_s=1.0)
    call = {"name": "web_fetch", "args": {"url": server.url("/slow")}}
    model = ScriptedChatModel(replies=[reply("", tool_calls=[call]), reply("Done.")])
    agent = Agent(make_settings(tmp_path), chat_model=model, tools=[tool], memory=None, critic=None)
    busy: list[int] = []

    def watch() -> None:
        while not busy and not done.is_set():
            busy.extend(POOL.busy_pids())
            time.sleep(0.01)

    done = threading.Event()
    watcher = threading.Thread(target=watch)
    watcher.start()
    started = time.monotonic()
    try:
        payload = agent.turns.ask("read it", "s1")
    finally:
        done.set()
        watcher.join()
        agent.close()
    assert payload["tool_calls"][0]["error"] == "tool timeout after 1s"
    assert time.monotonic() - started < 5
    assert busy, "the page never reached an extraction worker"
    with pytest.raises(ProcessLookupError):
        os.kill(busy[0], 0)
    assert busy[0] not in POOL.busy_pids()
    result = next(e for e in payload["event_log"] if e["subject"] == "tool.result.web_fetch")
    assert result["stopped"] is True


def test_fetch_deadline_covers_extraction(serve) -> None:
    server = serve({"/slow": send(SLOW_PAGE)})
    started = time.monotonic()
    try:
        result = fetcher(timeout_s=1.5, max_elements=200_000)({"url": server.url("/slow")})
    except ToolError as exc:  # killed at the deadline
        assert str(exc) == f"fetch timeout after 1.5s: {server.url('/slow')}"
    else:  # or trafilatura stopped by the worker's timer and the fast path finished in time
        assert result.data["extraction"] == "fast: extraction over its time budget"
        assert "Some words in a sentence." in result.text
    assert time.monotonic() - started < 2.5
