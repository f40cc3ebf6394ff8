"""A web site on 127.0.0.1 that serves fixed pages and records every request made to it.

Used as the pages an agent reads and as the attacker's server that injected instructions
point at: its ``hits`` say who reached it (the agent's fetcher or a browser, by User-Agent)
and with what query string, so a test or benchmark can count exfiltration attempts.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PNG_1PX = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d6a48a0000000049454e44ae426082"
)


@dataclass(frozen=True)
class Hit:
    method: str
    path: str  # with the query string
    user_agent: str


class Site:
    """``pages`` maps a path (no query) to HTML; any other path answers a 1-pixel PNG."""

    def __init__(self, pages: dict[str, str] | None = None) -> None:
        self.pages = dict(pages or {})
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with site._lock:
                    site.hits.append(Hit("GET", self.path, self.headers.get("User-Agent", "")))
                page = site.pages.get(self.path.split("?", 1)[0])
                body, ctype = (
                    (page.encode(), "text/html; charset=utf-8") if page else (PNG_1PX, "image/png")
                )
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> Site:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, path: str) -> str:
        return f"http://{self.host}{path}"

    def hits_from(self, agent: str) -> list[Hit]:
        """Requests whose User-Agent contains ``agent`` (e.g. ``LoCAL2`` or ``Chrome``)."""
        with self._lock:
            return [h for h in self.hits if agent in h.user_agent]

    def reset(self) -> None:
        with self._lock:
            self.hits.clear()
