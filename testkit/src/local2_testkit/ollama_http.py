"""The HTTP side of the Ollama-protocol test server: a request handler that records what
arrives, notices a client that went away (as Ollama does), and writes JSON, text or streamed
lines the way the real server does."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from local2_testkit.ollama_records import Served

if TYPE_CHECKING:
    from local2_testkit.ollama_server import FakeOllama


class OllamaHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked transfer needs 1.1
    timeout = 30  # idle keep-alive connections end by themselves
    server: OllamaHTTPServer
    arrived = 0.0  # perf_counter() when the current request's first line was read
    closed_by_client = False  # the current request's client went away before its reply ended

    def log_message(self, format: str, *args: Any) -> None:  # quiet in test output
        return

    def setup(self) -> None:
        super().setup()
        # Like Ollama (Go sets TCP_NODELAY on every connection): each NDJSON line leaves at
        # once. Without it Nagle's algorithm meets the client's delayed ACK and every reply
        # waits ~40 ms that the real server never adds.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def parse_request(self) -> bool:
        self.arrived = time.perf_counter()  # the request line has just been read
        self.closed_by_client = False
        return super().parse_request()

    def client_gone(self) -> bool:
        """Whether the client has closed the connection (a cancelled request), as Ollama
        notices it while the model still works: the socket reads as ended, without taking
        anything from it."""
        # poll, not select: select refuses descriptors above 1023, which a long test run
        # reaches, and the handler would die without answering.
        poller = select.poll()
        poller.register(self.connection, select.POLLIN)
        try:
            readable = poller.poll(0)
            gone = bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            gone = True
        self.closed_by_client = self.closed_by_client or gone
        return gone

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        fake = self.server.fake
        started = self.arrived
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        if len(raw) < length:  # the client went away while sending (a cancelled request)
            fake.errors.append(f"client went away while sending {method} {path}")
            self.close_connection = self.closed_by_client = True
            with fake.lock:
                fake.served.append(Served(path, {}, started, time.perf_counter(), True))
            return
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            fake.record(method, self.path, {"_raw": raw.decode("utf-8", "replace")})
            self.send_json(400, {"error": "invalid JSON in request body"})
            return
        fake.record(method, path, body if isinstance(body, dict) else {"_body": body})
        try:
            fake.route(self, method, path, body)
        except (BrokenPipeError, ConnectionResetError):
            self.closed_by_client = True
        if self.closed_by_client:
            fake.errors.append(f"client went away during {method} {path}")
            self.close_connection = True
        with fake.lock:
            fake.served.append(
                Served(path, body, started, time.perf_counter(), self.closed_by_client)
            )

    # -- writing ----------------------------------------------------------------------

    def send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_text(self, status: int, text: str, head_only: bool = False) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head_only:
            self.wfile.write(data)

    def send_stream(
        self,
        frames: Iterable[dict[str, Any]],  # frames of Ollama's (or OpenAI's) wire JSON
        drop_after: int | None,
        gap_s: float,
        *,
        sse: bool = False,
    ) -> None:
        """NDJSON lines (Ollama), or server-sent events ending in ``[DONE]`` (OpenAI)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if sse else "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        lines = [json.dumps(frame) for frame in frames] + (["[DONE]"] if sse else [])
        for sent, text in enumerate(lines):
            if drop_after is not None and sent >= drop_after:
                self.drop()
                return
            if sent and gap_s:
                time.sleep(gap_s)
                if self.client_gone():  # cancelled mid-reply: stop generating
                    return
            line = (f"data: {text}\n\n" if sse else f"{text}\n").encode()
            self.wfile.write(f"{len(line):X}\r\n".encode() + line + b"\r\n")
            self.wfile.flush()
            self.server.fake.count_line()
        self.wfile.write(b"0\r\n\r\n")

    def drop(self) -> None:
        """End the connection abruptly, without the terminating chunk."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class OllamaHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # never wait for a client's idle keep-alive connection
    fake: FakeOllama

    def handle_error(self, request: Any, client_address: Any) -> None:
        import traceback

        self.fake.errors.append(traceback.format_exc())


def openai_error(h: OllamaHandler, status: int, message: str, code: str) -> None:
    kind = "invalid_request_error" if status < 500 else "server_error"
    h.send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})
