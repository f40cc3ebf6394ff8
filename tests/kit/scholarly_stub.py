"""A loopback stand-in for the scholarly APIs: recorded answers served by a real HTTP server
on 127.0.0.1 (``LocalServer``), each route answering its queue of answers in turn, and a
clock that records the pauses the client keeps instead of sleeping them."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from local2_testkit.web_server import LocalServer, Route

RECORDED = Path(__file__).parents[1] / "fixtures" / "scholarly"
_EPOCHS = itertools.count(1)


def recorded(name: str) -> bytes:
    """A recorded answer's body (``tests/fixtures/scholarly/``)."""
    return (RECORDED / name).read_bytes()


@dataclass
class Reply:
    """One answer: status, body, headers; ``delay_s`` before the body is written."""

    body: bytes = b""
    status: int = 200
    ctype: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


class FakeClock:
    """The client's clock: ``sleep`` advances it and is recorded. Each clock starts far past
    the one before, so a host's gate left by an earlier test never makes this one wait."""

    def __init__(self) -> None:
        self.now = next(_EPOCHS) * 1e6  # a million seconds apart, precise to 1e-9 s
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


class Stub:
    """Routes ``path -> [Reply, ...]``: each request takes the next reply (the last one
    repeats); ``asked(path)`` is the query of each request that path received."""

    def __init__(self, server: LocalServer, replies: dict[str, list[Reply]]) -> None:
        self.server = server
        self.replies = replies
        for path in replies:
            server.routes[path] = self._route(path)

    def _route(self, path: str) -> Route:
        def answer(h: BaseHTTPRequestHandler) -> None:
            queue = self.replies[path]
            reply = queue.pop(0) if len(queue) > 1 else queue[0]
            h.send_response(reply.status)
            h.send_header("Content-Type", reply.ctype)
            h.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                h.send_header(name, value)
            h.end_headers()
            if reply.delay_s:
                time.sleep(reply.delay_s)
            h.wfile.write(reply.body)

        return answer

    def url(self, path: str = "") -> str:
        return self.server.url(path)

    def paths(self) -> list[str]:
        """Every request's path and query, in order."""
        return self.server.paths()

    def asked(self, path: str) -> list[dict[str, list[str]]]:
        paths = [urlsplit(p) for p in self.server.paths()]
        return [parse_qs(p.query) for p in paths if p.path == path]

    def headers(self, path: str) -> list[dict[str, str]]:
        return [
            {k.lower(): v for k, v in h.items()}
            for p, h in self.server.seen
            if urlsplit(p).path == path
        ]


@contextmanager
def stub(replies: dict[str, list[Reply]]) -> Iterator[Stub]:
    """A loopback server answering ``replies``, closed after the block."""
    server = LocalServer({})
    try:
        yield Stub(server, replies)
    finally:
        server.close()
