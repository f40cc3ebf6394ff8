"""What the tools tests share: a loopback search API with SearXNG's and Brave's answers, recorded
keyless (ddgs) search, the extracted text of a fetch result."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import ddgs.exceptions


class ApiServer:
    """Answers every GET/POST with ``reply(path, query, headers, body) -> (status, obj)``."""

    def __init__(self, reply: Callable[..., tuple[int, object]], delay: float = 0.0):
        self.requests: list[dict[str, object]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                req = {
                    "method": self.command,
                    "path": parts.path,
                    "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "json": json.loads(body) if body else None,
                }
                outer.requests.append(req)
                time.sleep(delay)
                status, obj = reply(req)
                data = json.dumps(obj).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


SEARXNG_BODY = {
    "query": "llama tool calling",
    "number_of_results": 2,
    "results": [
        {
            "url": "https://one.example/a",
            "title": "First result",
            "content": "The first snippet.",
            "engine": "duckduckgo",
            "score": 2.0,
            "publishedDate": None,
        },
        {
            "url": "https://two.example/b",
            "title": "Second result",
            "content": "The second snippet.",
            "engine": "bing",
            "score": 1.0,
        },
    ],
    "answers": [],
    "suggestions": ["llama tools"],
    "unresponsive_engines": [],
}


BRAVE_BODY = {
    "type": "search",
    "query": {"original": "llama tool calling"},
    "web": {
        "type": "search",
        "results": [
            {
                "title": "First result",
                "url": "https://one.example/a",
                "description": "The first snippet.",
                "age": "2 days ago",
                "language": "en",
            },
            {
                "title": "Second result",
                "url": "https://two.example/b",
                "description": "The second snippet.",
            },
        ],
    },
}


RECORDED = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "ddgs" / "recorded.json").read_text(encoding="utf-8")
)


class RecordedDDGS:
    """Stands in for ``ddgs.DDGS``: replays one recorded outcome of the real client."""

    def __init__(self, case: str, log: list[dict[str, Any]] | None = None) -> None:
        self.case = RECORDED[case]
        self.log = log if log is not None else []

    def __call__(self, timeout_s: float) -> RecordedDDGS:
        self.log.append({"timeout_s": timeout_s})
        return self

    def text(self, query: str, max_results: int = 10, **kwargs: Any) -> list[dict[str, str]]:
        self.log.append({"query": query, "max_results": max_results})
        if "raises" in self.case:
            raise getattr(ddgs.exceptions, self.case["raises"])(self.case["message"])
        return list(self.case["returns"])


def text_of(result_text: str) -> str:
    head, sep, body = result_text.partition("\nExtracted text:\n")
    assert sep and head.startswith("URL: ")
    return body
