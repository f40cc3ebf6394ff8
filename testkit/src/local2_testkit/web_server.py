"""A real HTTP server on 127.0.0.1 with canned routes, for web_fetch tests and benchmarks."""

from __future__ import annotations

import contextlib
import threading
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Route = Callable[[BaseHTTPRequestHandler], None]


class LocalServer:
    """A threaded HTTP server on 127.0.0.1 with routes ``path -> handler(request)``."""

    def __init__(self, routes: dict[str, Route]):
        self.routes = routes
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.state: dict[str, object] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.seen.append((self.path, dict(self.headers)))
                route = outer.routes.get(self.path.split("?", 1)[0])
                if route is None:
                    self.send_error(404)
                    return
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    route(self)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def paths(self) -> list[str]:
        return [p for p, _ in self.seen]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send(body: bytes, ctype: str = "text/html; charset=utf-8", status: int = 200) -> Route:
    def route(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        if ctype:
            h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return route


def redirect(location: str, status: int = 302) -> Route:
    def route(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Location", location)
        h.send_header("Content-Length", "0")
        h.end_headers()

    return route


def send_encoded(body: bytes, encoding: str, ctype: str = "text/html") -> Route:
    """A route answering ``body`` as it is, labelled with ``Content-Encoding: encoding``."""

    def route(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Encoding", encoding)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return route


def gzip_bomb(size: int = 256 << 20) -> bytes:
    """``size`` bytes of ``<div>``, gzip-compressed to about a thousandth of that."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"<div>" * (1 << 20)
    parts = [packer.compress(b"<html><body>")]
    parts += [packer.compress(block) for _ in range(size // len(block))]
    return b"".join([*parts, packer.flush()])
