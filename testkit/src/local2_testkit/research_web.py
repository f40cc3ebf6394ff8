"""A loopback web for research tests and benchmarks: a SearXNG-style search API and pages.

One HTTP server on 127.0.0.1 serves ``/search?q=..&format=json`` (SearXNG's JSON API, so
the real ``searxng`` provider talks to it) and ``/pages/<name>`` (captured HTML pages, e.g.
``bench/extraction_corpus/pages``). Search results are the pages ranked by the words they
share with the query; a page may carry a date (``Page.published``), which its result shows as
SearXNG's ``publishedDate``, and a search with SearXNG's ``time_range`` (day, week, month,
year) leaves out the pages dated before that window (an undated page is kept, as an engine
that knows no date keeps it). Every search's parameters are recorded. Failures are
scripted: the next searches can answer with given HTTP statuses, a page can answer with a
status or late, page responses can be held back until released (to kill a run in the middle
of a step), and pages can be served only when fetched side by side (a barrier).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

_WORD = re.compile(r"[a-zà-ÿ0-9]{3,}")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "what",
        "how",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "its",
        "into",
        "about",
        "which",
        "when",
        "where",
        "who",
        "why",
        "does",
        "did",
        "than",
        "then",
        "them",
        "they",
        "their",
        "there",
        "these",
        "those",
    ]
)


@dataclass
class Page:
    name: str
    title: str
    html: str
    text: str  # main text, for snippets and ranking
    published: date | None = None  # its date, for time_range and publishedDate

    def words(self) -> set[str]:
        return _words(f"{self.title} {self.text}")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def load_pages(directory: str | Path, names: Iterable[str] | None = None) -> list[Page]:
    """The ``*.html`` pages of ``directory`` with their ``<title>`` and main text."""
    from local2.documents import decode_body, extract_main_text

    wanted = set(names) if names is not None else None
    pages = []
    for path in sorted(Path(directory).glob("*.html")):
        if wanted is not None and path.stem not in wanted:
            continue
        html = decode_body(path.read_bytes(), None, True)
        match = re.search(r"<title>(.*?)</title>", html, re.S | re.I)
        title = " ".join(match.group(1).split()) if match else path.stem
        pages.append(Page(path.stem, title, html, extract_main_text(html, None)))
    return pages


# SearXNG's time_range: how many days back each reaches
_WINDOWS = {"day": 1, "week": 7, "month": 31, "year": 366}


@dataclass
class Hit:
    """One request the server answered."""

    path: str
    query: str
    status: int
    at: float = field(default_factory=time.time)
    params: dict[str, str] = field(default_factory=dict)  # each query parameter's first value


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        web = self.server.web
        parts = urlsplit(self.path)
        params = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/search":
            query = params.get("q", "")
            status, body, kind = web._search(query, params.get("time_range"))
        elif parts.path.startswith("/pages/"):
            query = ""
            status, body, kind = web._page(parts.path.removeprefix("/pages/"))
        else:
            query, status, body, kind = "", 404, b"not found", "text/plain"
        web._record(Hit(parts.path, query, status, params=params))
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    web: LoopbackWeb


class LoopbackWeb:
    """The search API and the pages, on one loopback port, started and stopped by the caller."""

    def __init__(self, pages: list[Page], *, max_results: int = 5) -> None:
        self.pages = {p.name: p for p in pages}
        self.max_results = max_results
        self.search_failures: list[int] = []  # statuses for the next searches, in order
        self.search_delay_s = 0.0  # each search answers after this long
        self.page_status: dict[str, int] = {}  # a page answering with this status
        self.hold_pages = threading.Event()  # set: page responses wait until released
        self.slow_pages: dict[str, float] = {}  # a page answering after this long
        # Set: each page waits for the barrier's other parties, so only pages fetched side
        # by side are served (a barrier that breaks answers 503).
        self.page_barrier: threading.Barrier | None = None
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        self._httpd: _Server | None = None

    def __enter__(self) -> LoopbackWeb:
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.web = self
        self._httpd = httpd
        threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "LoopbackWeb is not running"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def host(self) -> str:
        return self.url.removeprefix("http://")

    def page_url(self, name: str) -> str:
        return f"{self.url}/pages/{quote(name)}"

    def release(self) -> None:
        self.hold_pages.clear()

    def _record(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)

    def searches(self) -> list[str]:
        with self._lock:
            return [h.query for h in self.hits if h.path == "/search"]

    def search_params(self) -> list[dict[str, str]]:
        """Each search's query parameters (``q``, ``format``, ``time_range``...), in order."""
        with self._lock:
            return [dict(h.params) for h in self.hits if h.path == "/search"]

    def pages_served(self) -> list[str]:
        with self._lock:
            return [h.path.removeprefix("/pages/") for h in self.hits if h.path != "/search"]

    # -- answers ---------------------------------------------------------------------------

    def rank(self, query: str) -> list[Page]:
        wanted = _words(query)
        scored = [(len(wanted & p.words()), p.name, p) for p in self.pages.values()]
        return [p for score, _, p in sorted(scored, key=lambda s: (-s[0], s[1])) if score > 0]

    def _search(self, query: str, time_range: str | None = None) -> tuple[int, bytes, str]:
        if self.search_delay_s:
            time.sleep(self.search_delay_s)
        with self._lock:
            failure = self.search_failures.pop(0) if self.search_failures else None
        if failure is not None:
            return failure, json.dumps({"error": "scripted failure"}).encode(), "application/json"
        back = _WINDOWS.get(time_range or "")
        start = date.today() - timedelta(days=back) if back is not None else None
        ranked = [
            p
            for p in self.rank(query)
            if start is None or p.published is None or p.published >= start
        ]
        results = [
            {
                "url": self.page_url(p.name),
                "title": p.title,
                "content": " ".join(p.text.split())[:300],
                "engine": "loopback",
                **({"publishedDate": p.published.isoformat()} if p.published else {}),
            }
            for p in ranked[: self.max_results]
        ]
        body = {"query": query, "number_of_results": len(results), "results": results}
        return 200, json.dumps(body).encode(), "application/json"

    def _page(self, name: str) -> tuple[int, bytes, str]:
        deadline = time.time() + 60
        while self.hold_pages.is_set() and time.time() < deadline:
            time.sleep(0.05)
        page = self.pages.get(name.removesuffix(".html"))
        if self.page_barrier is not None:
            try:
                self.page_barrier.wait()
            except threading.BrokenBarrierError:
                return 503, b"pages were not fetched together", "text/plain"
        time.sleep(self.slow_pages.get(name.removesuffix(".html"), 0.0))
        status = self.page_status.get(name.removesuffix(".html"), 200 if page else 404)
        if status != 200 or page is None:
            return status, f"status {status}".encode(), "text/plain"
        return 200, page.html.encode("utf-8"), "text/html; charset=utf-8"


# settings as YAML would give them
def research_overrides(web: LoopbackWeb, data_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Settings overrides that point ``web_search`` (SearXNG) and ``web_fetch`` at ``web``."""
    return {
        "system": {"data_dir": str(data_dir)},
        "web": {
            "search": {"provider": "searxng", "searxng_url": web.url, "timeout_s": 10},
            "fetch": {"allow_hosts": [web.host], "timeout_s": 10},
        },
        "research": {"retry_backoff_s": 0.05},
    }
