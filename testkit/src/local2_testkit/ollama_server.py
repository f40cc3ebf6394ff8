"""A fake Ollama server speaking the real HTTP protocol, driven by a pluggable "brain".

Tests, the story runner and the benchmarks point the real ``ChatOllama`` / ``ollama`` client at
it, so every byte crosses a socket as it would with Ollama: NDJSON streaming over chunked
HTTP, thinking in ``message.thinking`` or inline ``<think>``, whole tool calls in one chunk,
Ollama's 404 text for a model that is not pulled, and connections that die mid-stream. Like
Ollama, it stops working on a request whose client closed the connection (a cancelled
request), even before the reply's first byte, and records it (``Served.closed_by_client``).

Like Ollama, it also speaks the OpenAI chat-completions protocol under ``/v1``
(``/v1/models``, ``/v1/chat/completions`` with server-sent events when streaming), the way
vLLM, llama.cpp's server and LM Studio do: reasoning in ``reasoning_content`` (or another
field, ``openai_reasoning_field``), tool calls with JSON-string arguments, an optional API
key (``api_key``: 401 without it).

Each pulled model has capabilities (``/api/show``), and requests are held to them as Ollama
does: ``tools`` for a model without ``tools``, or ``think: true`` for one without
``thinking``, is refused with HTTP 400. Register models as names (chat models can do
everything, names with "embed" are embedding models) or as :class:`FakeModel`.

Usage::

    with FakeOllama(brain=RuleBrain()) as srv:
        chat = ChatOllama(model="qwen3:4b", base_url=srv.url, reasoning=True)
        chat.invoke("What is the capital of France?")
        srv.chat_requests[-1]["messages"]
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from local2_testkit.brains import (
    Brain,
    LoopBrain,
    Reply,
    RuleBrain,
    ScriptBrain,
    ThinkMode,
    call_parts,
    message_text,
    tool_names,
)
from local2_testkit.obeying import ObeyingBrain

__all__ = [
    "Brain",
    "FakeModel",
    "FakeOllama",
    "LoopBrain",
    "ObeyingBrain",
    "Recorded",
    "Reply",
    "RuleBrain",
    "ScriptBrain",
    "Served",
    "hash_embedding",
    "tool_names",
]

OLLAMA_VERSION = "0.12.6"
EMBED_DIM = 64
CHAT_CAPABILITIES = ("completion", "tools", "thinking")


@dataclass(frozen=True)
class FakeModel:
    """A pulled model and what ``/api/show`` says about it (None: the defaults for its kind)."""

    name: str
    capabilities: tuple[str, ...] | None = None
    context_length: int | None = None
    parameter_size: str | None = None

    @property
    def embedding(self) -> bool:
        return _is_embedding_model(self.name)

    def caps(self) -> tuple[str, ...]:
        if self.capabilities is not None:
            return tuple(self.capabilities)
        return ("embedding",) if self.embedding else CHAT_CAPABILITIES

    def context(self) -> int:
        return self.context_length or (2048 if self.embedding else 40960)

    def size(self) -> str:
        return self.parameter_size or ("137M" if self.embedding else "4.0B")


DEFAULT_MODELS: tuple[str | FakeModel, ...] = (
    FakeModel("gemma4:12b", CHAT_CAPABILITIES, 131072, "12B"),
    "qwen3:4b",
    "nomic-embed-text",
)


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    method: str
    path: str
    body: dict[str, Any]


@dataclass(frozen=True)
class Served:
    """One request the server answered, with when it arrived (its request line read) and when
    the reply ended (``time.perf_counter()``): what the model took, for measuring the time
    around it. The server's own parsing of the request counts as the model's, as a real
    Ollama's would."""

    path: str
    body: dict[str, Any]
    started: float
    ended: float
    closed_by_client: bool = False  # the client went away before the reply ended


def hash_embedding(text: str, dim: int = EMBED_DIM) -> list[float]:
    """A deterministic, L2-normalised signed bag-of-words vector.

    Texts sharing words get a positive cosine similarity, unrelated texts land near zero, so
    ranking and threshold logic can be tested without an embedding model.
    """
    vec = [0.0] * dim
    for token in re.findall(r"\w+", text.lower()) or ["<empty>"]:
        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    if not any(vec):  # the signs cancelled out exactly: still return a unit vector
        vec[0] = 1.0
    return _unit(vec)


def _unit(vec: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def _pieces(text: str, words_per_chunk: int) -> list[str]:
    """Split text into token-ish pieces that concatenate back to exactly ``text``."""
    if not text:
        return []
    words = re.findall(r"\s*\S+\s*", text) or [text]
    if "".join(words) != text:  # whitespace-only text
        return [text]
    size = max(1, words_per_chunk)
    return ["".join(words[i : i + size]) for i in range(0, len(words), size)]


# --------------------------------------------------------------------------- the server


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _canonical(model: str) -> str:
    """Ollama's name normalisation: ``name`` means ``name:latest``."""
    return model if ":" in model.rsplit("/", 1)[-1] else f"{model}:latest"


def _is_embedding_model(model: str) -> bool:
    return "embed" in model or "minilm" in model


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked transfer needs 1.1
    timeout = 30  # idle keep-alive connections end by themselves
    server: _Server
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
            with fake._lock:
                fake.served.append(Served(path, {}, started, time.perf_counter(), True))
            return
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            fake._record(method, self.path, {"_raw": raw.decode("utf-8", "replace")})
            self._json(400, {"error": "invalid JSON in request body"})
            return
        fake._record(method, path, body if isinstance(body, dict) else {"_body": body})
        try:
            fake._route(self, method, path, body)
        except (BrokenPipeError, ConnectionResetError):
            self.closed_by_client = True
        if self.closed_by_client:
            fake.errors.append(f"client went away during {method} {path}")
            self.close_connection = True
        with fake._lock:
            fake.served.append(
                Served(path, body, started, time.perf_counter(), self.closed_by_client)
            )

    # -- writing ----------------------------------------------------------------------

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _text(self, status: int, text: str, head_only: bool = False) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head_only:
            self.wfile.write(data)

    def _stream(
        self,
        frames: Iterable[dict[str, Any]],
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
                self._drop()
                return
            if sent and gap_s:
                time.sleep(gap_s)
                if self.client_gone():  # cancelled mid-reply: stop generating
                    return
            line = (f"data: {text}\n\n" if sse else f"{text}\n").encode()
            self.wfile.write(f"{len(line):X}\r\n".encode() + line + b"\r\n")
            self.wfile.flush()
            self.server.fake._count_line()
        self.wfile.write(b"0\r\n\r\n")

    def _drop(self) -> None:
        """End the connection abruptly, without the terminating chunk."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # never wait for a client's idle keep-alive connection
    fake: FakeOllama

    def handle_error(self, request: Any, client_address: Any) -> None:
        import traceback

        self.fake.errors.append(traceback.format_exc())


class FakeOllama:
    """An Ollama-compatible HTTP server on 127.0.0.1 in a background thread.

    Behaviour knobs (all attributes may be changed while it runs):
    ``think_mode`` ("field": thinking in ``message.thinking`` when the request has
    ``think=true``, inline ``<think>`` when ``think`` is unset, dropped when false;
    "inline": always inline in content; "none": never any thinking), ``drop_after_chunks``
    (close the connection after N NDJSON lines), ``delay_s`` (before the response),
    ``chunk_delay_s`` (between lines), ``words_per_chunk`` (content split into pieces).
    ``lines_sent`` counts the NDJSON lines streamed so far (to act mid-answer), and a client
    that goes away mid-stream is noted in ``errors``.
    """

    def __init__(
        self,
        brain: Brain | None = None,
        *,
        models: Sequence[str | FakeModel] = DEFAULT_MODELS,
        think_mode: ThinkMode = "field",
        drop_after_chunks: int | None = None,
        delay_s: float = 0.0,
        chunk_delay_s: float = 0.0,
        words_per_chunk: int = 1,
        embed_dim: int = EMBED_DIM,
        port: int = 0,
        api_key: str | None = None,
        openai_reasoning_field: str = "reasoning_content",
    ) -> None:
        self.brain: Brain = brain or RuleBrain()
        self.models: list[str] = []  # names; a test may reassign it to "unpull" models
        self.specs: dict[str, FakeModel] = {}
        for model in models:
            spec = model if isinstance(model, FakeModel) else FakeModel(model)
            self.specs[_canonical(spec.name)] = spec
            self.models.append(spec.name)
        self.think_mode: ThinkMode = think_mode
        self.drop_after_chunks = drop_after_chunks
        self.delay_s = delay_s
        self.chunk_delay_s = chunk_delay_s
        self.words_per_chunk = words_per_chunk
        self.embed_dim = embed_dim
        self.api_key = api_key  # required as a bearer token by the /v1 endpoints when set
        self.openai_reasoning_field = openai_reasoning_field
        self.log: list[Recorded] = []
        self.served: list[Served] = []
        self.errors: list[str] = []
        # Replies that did not match the JSON schema their request sent as ``format``
        # (real Ollama constrains decoding to it; a brain may break it on purpose).
        self.format_violations: list[str] = []
        self.lines_sent = 0
        self._port = port
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def add_model(
        self,
        name: str,
        *,
        capabilities: Sequence[str] | None = None,
        context_length: int | None = None,
        parameter_size: str | None = None,
    ) -> None:
        """Pull ``name`` with these capabilities (None: the defaults for its kind)."""
        caps = tuple(capabilities) if capabilities is not None else None
        self.specs[_canonical(name)] = FakeModel(name, caps, context_length, parameter_size)
        if self._known(name) is None:
            self.models.append(name)

    def spec(self, name: str) -> FakeModel:
        return self.specs.get(_canonical(name)) or FakeModel(name)

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> FakeOllama:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _Server(("127.0.0.1", self._port), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeOllama is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL for ``ChatOllama(base_url=...)`` and ``OLLAMA_HOST``."""
        return f"http://127.0.0.1:{self.port}"

    # -- recordings -------------------------------------------------------------------

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, in order (GET/HEAD ones are ``{}``)."""
        with self._lock:
            return [r.body for r in self.log]

    def bodies(self, path: str) -> list[dict[str, Any]]:
        with self._lock:
            return [r.body for r in self.log if r.path == path]

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return self.bodies("/api/chat")

    @property
    def embed_requests(self) -> list[dict[str, Any]]:
        return self.bodies("/api/embed")

    @property
    def openai_requests(self) -> list[dict[str, Any]]:
        return self.bodies("/v1/chat/completions")

    @property
    def openai_url(self) -> str:
        """Base URL for an OpenAI client (``base_url``)."""
        return f"{self.url}/v1"

    def _record(self, method: str, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.log.append(Recorded(method, path, body))

    def _count_line(self) -> None:
        with self._lock:
            self.lines_sent += 1

    # -- routing ----------------------------------------------------------------------

    def _known(self, model: str) -> str | None:
        wanted = _canonical(model)
        return next((m for m in self.models if _canonical(m) == wanted), None)

    def _route(self, h: _Handler, method: str, path: str, body: dict[str, Any]) -> None:
        if path == "/" and method in ("GET", "HEAD"):
            h._text(200, "Ollama is running", head_only=method == "HEAD")
        elif path == "/api/version" and method == "GET":
            h._json(200, {"version": OLLAMA_VERSION})
        elif path in ("/api/tags", "/api/ps") and method == "GET":
            h._json(200, {"models": [self._tag(m) for m in self.models]})
        elif path == "/api/show" and method == "POST":
            self._show(h, body)
        elif path in ("/api/chat", "/api/generate") and method == "POST":
            self._generate(h, path, body)
        elif path in ("/api/embed", "/api/embeddings") and method == "POST":
            self._embed(h, path, body)
        elif path.startswith("/v1/") and not self._key_ok(h):
            _openai_error(h, 401, "Incorrect API key provided.", "invalid_api_key")
        elif path == "/v1/models" and method == "GET":
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "local2"}
                for m in self.models
            ]
            h._json(200, {"object": "list", "data": data})
        elif path == "/v1/chat/completions" and method == "POST":
            self._openai_chat(h, body)
        else:
            h._text(404, "404 page not found")

    def _tag(self, model: str) -> dict[str, Any]:
        family = re.split(r"[:\-]", model, maxsplit=1)[0]
        spec = self.spec(model)
        return {
            "name": _canonical(model),
            "model": _canonical(model),
            "modified_at": "2025-01-01T00:00:00Z",
            "size": 2_500_000_000 if not _is_embedding_model(model) else 274_000_000,
            "digest": hashlib.sha256(model.encode()).hexdigest(),
            "details": {
                "parent_model": "",
                "format": "gguf",
                "family": family,
                "families": [family],
                "parameter_size": spec.size(),
                "quantization_level": "F16" if _is_embedding_model(model) else "Q4_K_M",
            },
        }

    def _show(self, h: _Handler, body: dict[str, Any]) -> None:
        name = str(body.get("model") or body.get("name") or "")
        model = self._known(name)
        if model is None:
            h._json(404, {"error": f"model '{name}' not found"})
            return
        tag = self._tag(model)
        family = tag["details"]["family"]
        spec = self.spec(model)
        embedding = spec.embedding
        h._json(
            200,
            {
                "license": "",
                "modelfile": f"FROM {model}\n",
                "parameters": "temperature 0.6",
                "template": "{{ .Prompt }}",
                "details": tag["details"],
                "model_info": {
                    "general.architecture": family,
                    f"{family}.context_length": spec.context(),
                    f"{family}.embedding_length": self.embed_dim if embedding else 2560,
                },
                "capabilities": list(spec.caps()),
                "modified_at": tag["modified_at"],
            },
        )

    def _not_found(self, h: _Handler, name: str) -> None:
        h._json(404, {"error": f'model "{name}" not found, try pulling it first'})

    def _embed(self, h: _Handler, path: str, body: dict[str, Any]) -> None:
        name = str(body.get("model") or "")
        if self._known(name) is None:
            self._not_found(h, name)
            return
        if path == "/api/embeddings":  # the legacy single-prompt endpoint
            prompt = str(body.get("prompt") or "")
            h._json(200, {"embedding": hash_embedding(prompt, self.embed_dim)})
            return
        inputs = body.get("input", "")
        texts = [inputs] if isinstance(inputs, str) else [str(t) for t in inputs]
        dim = int(body.get("dimensions") or self.embed_dim)
        vectors = [hash_embedding(t, dim) for t in texts]  # hashed straight to ``dimensions``
        h._json(
            200,
            {
                "model": name,
                "embeddings": vectors,
                "total_duration": 1_000_000,
                "load_duration": 100_000,
                "prompt_eval_count": sum(len(t.split()) for t in texts),
            },
        )

    def _generate(self, h: _Handler, path: str, body: dict[str, Any]) -> None:
        name = str(body.get("model") or "")
        if not name:
            h._json(400, {"error": "model is required"})
            return
        model = self._known(name)
        if model is None:
            self._not_found(h, name)
            return
        caps = self.spec(model).caps()
        if "completion" not in caps:
            h._json(400, {"error": f'"{name}" does not support {path.rsplit("/", 1)[-1]}'})
            return
        wanted = [("tools", bool(body.get("tools"))), ("thinking", body.get("think") is True)]
        for capability, asked in wanted:
            if asked and capability not in caps:  # Ollama refuses, it does not ignore
                h._json(400, {"error": f'"{name}" does not support {capability}'})
                return
        request = body if path == "/api/chat" else self._as_chat(body)
        reply = self._reply(
            request, lambda status, text: h._json(status, {"error": text}), h.client_gone
        )
        if reply is None:
            return
        if reply.thinking and "thinking" not in caps:  # such a model does not think aloud
            reply = replace(reply, thinking="")
        self._check_format(request.get("format"), reply.content)
        frames = self._frames(path, name, request, reply)
        if body.get("stream", True) is False:
            h._json(200, self._merge(frames))
            return
        drop = reply.drop_after_chunks
        if drop is None:
            drop = self.drop_after_chunks
        gap = self.chunk_delay_s if reply.chunk_delay_s is None else reply.chunk_delay_s
        h._stream(frames, drop, gap)

    def _reply(
        self,
        request: dict[str, Any],
        fail: Callable[[int, str], None],
        gone: Callable[[], bool] = lambda: False,
    ) -> Reply | None:
        """The brain's reply after its delay, or None once ``fail(status, text)`` has answered
        (a brain bug, a scripted error), the client has ``gone`` (it closed the connection
        while the "model" worked) or the server is stopping."""
        try:
            reply = self.brain(request)
        except Exception as exc:  # a brain bug must reach the test as an HTTP error
            self.errors.append(f"brain failed: {exc!r}")
            fail(500, f"brain failed: {exc}")
            return None
        if isinstance(reply, str):
            reply = Reply(content=reply)
        delay = self.delay_s if reply.delay_s is None else reply.delay_s
        if delay and self._wait(delay, gone):
            return None
        if reply.error is not None:
            fail(reply.status, reply.error)
            return None
        return reply

    def _wait(self, seconds: float, gone: Callable[[], bool]) -> bool:
        """Wait ``seconds`` as a model working; True as soon as the client has gone or the
        server is stopping (then there is no reply to send)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self._stopping.wait(min(left, 0.01)) or gone():
                return True
        return gone()

    @property
    def closed_requests(self) -> list[Served]:
        """Requests whose client closed the connection before the reply ended."""
        with self._lock:
            return [r for r in self.served if r.closed_by_client]

    def _check_format(self, schema: Any, content: str) -> None:
        """Record a reply that breaks the requested ``format`` (a schema, or ``"json"``)."""
        if not schema:
            return
        try:
            document = json.loads(content)
        except json.JSONDecodeError as exc:
            self.format_violations.append(f"not JSON: {exc.msg}")
            return
        if isinstance(schema, dict):
            import jsonschema

            problem = jsonschema.exceptions.best_match(
                jsonschema.Draft202012Validator(schema).iter_errors(document)
            )
            if problem is not None:
                self.format_violations.append(problem.message[:200])

    @staticmethod
    def _as_chat(body: dict[str, Any]) -> dict[str, Any]:
        """An ``/api/generate`` body seen as a chat request, so one brain serves both."""
        messages = []
        if body.get("system"):
            messages.append({"role": "system", "content": str(body["system"])})
        messages.append({"role": "user", "content": str(body.get("prompt") or "")})
        return {**body, "messages": messages}

    def _frames(
        self, path: str, model: str, request: dict[str, Any], reply: Reply
    ) -> list[dict[str, Any]]:
        mode = reply.think_mode or self.think_mode
        think = request.get("think")
        content, thinking = reply.content, ""
        if reply.thinking and mode != "none":
            if mode == "inline" or think is None:  # unset think: the model's default, inline
                content = f"<think>\n{reply.thinking}\n</think>\n\n{content}"
            elif think is not False:
                thinking = reply.thinking
        chat = path == "/api/chat"

        def frame(
            text: str = "", thought: str = "", calls: list[Any] | None = None
        ) -> dict[str, Any]:
            out: dict[str, Any] = {"model": model, "created_at": _now()}
            if chat:
                message: dict[str, Any] = {"role": "assistant", "content": text}
                if thought:
                    message["thinking"] = thought
                if calls:
                    message["tool_calls"] = calls
                out["message"] = message
            else:
                out["response"] = text
                if thought:
                    out["thinking"] = thought
            out["done"] = False
            return out

        frames = [frame(thought=p) for p in _pieces(thinking, self.words_per_chunk)]
        frames += [frame(text=p) for p in _pieces(content, self.words_per_chunk)]
        if reply.tool_calls and chat:
            calls = []
            for i, call in enumerate(reply.tool_calls):
                name, args = call_parts(call)
                calls.append(
                    {"id": f"call_{i}", "function": {"index": i, "name": name, "arguments": args}}
                )
            frames.append(frame(calls=calls))
        prompt_words = sum(len(message_text(m).split()) for m in request.get("messages") or [])
        final = frame()
        final.update(
            done=True,
            done_reason=reply.done_reason,
            total_duration=5_000_000,
            load_duration=1_000_000,
            prompt_eval_count=prompt_words,
            prompt_eval_duration=1_000_000,
            eval_count=max(1, len(frames)),
            eval_duration=3_000_000,
        )
        return [*frames, final]

    @staticmethod
    def _merge(frames: list[dict[str, Any]]) -> dict[str, Any]:
        """The non-streaming response: all pieces joined into the final frame."""
        final = dict(frames[-1])
        if "message" in final:
            message: dict[str, Any] = {"role": "assistant", "content": ""}
            for f in frames:
                part = f["message"]
                message["content"] += part.get("content", "")
                if part.get("thinking"):
                    message["thinking"] = message.get("thinking", "") + part["thinking"]
                if part.get("tool_calls"):
                    message["tool_calls"] = part["tool_calls"]
            final["message"] = message
        else:
            final["response"] = "".join(f.get("response", "") for f in frames)
            thinking = "".join(f.get("thinking", "") for f in frames)
            if thinking:
                final["thinking"] = thinking
        return final

    # -- the OpenAI-compatible protocol (/v1) -------------------------------------------

    def _key_ok(self, h: _Handler) -> bool:
        if self.api_key is None:
            return True
        return h.headers.get("Authorization", "") == f"Bearer {self.api_key}"

    @staticmethod
    def _openai_as_chat(body: dict[str, Any]) -> dict[str, Any]:
        """An OpenAI request seen as an Ollama chat request, so one brain serves both."""
        messages = []
        for message in body.get("messages") or []:
            content = message.get("content") or ""
            if isinstance(content, list):  # content parts: keep the text ones
                content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            messages.append({**message, "content": content})
        return {**body, "messages": messages, "think": True}

    def _openai_parts(self, reply: Reply) -> tuple[str, str, list[dict[str, Any]]]:
        """The reply as OpenAI sends it: its content (thinking inline when the mode says),
        its separate reasoning, and its tool calls."""
        content, thinking = reply.content, ""
        mode = reply.think_mode or self.think_mode
        if reply.thinking and mode == "inline":
            content = f"<think>\n{reply.thinking}\n</think>\n\n{content}"
        elif reply.thinking and mode != "none":
            thinking = reply.thinking
        calls = []
        for i, call in enumerate(reply.tool_calls):
            tool, args = call_parts(call)
            calls.append(
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps(args)},
                }
            )
        return content, thinking, calls

    def _openai_chat(self, h: _Handler, body: dict[str, Any]) -> None:
        name = str(body.get("model") or "")
        if self._known(name) is None or _is_embedding_model(name):
            _openai_error(h, 404, f"The model `{name}` does not exist.", "model_not_found")
            return
        request = self._openai_as_chat(body)
        reply = self._reply(
            request,
            lambda status, text: _openai_error(h, status, text, "server_error"),
            h.client_gone,
        )
        if reply is None:
            return
        content, thinking, calls = self._openai_parts(reply)
        finish = "tool_calls" if calls else ("length" if reply.done_reason == "length" else "stop")
        words = sum(len(message_text(m).split()) for m in request["messages"])
        usage = {
            "prompt_tokens": words,
            "completion_tokens": len(content.split()) + 1,
            "total_tokens": words + len(content.split()) + 1,
        }
        base = {"id": f"chatcmpl-{len(self.log)}", "created": int(time.time()), "model": name}
        field = self.openai_reasoning_field
        if body.get("stream") is not True:
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if thinking:
                message[field] = thinking
            if calls:
                message["tool_calls"] = calls
            choice = {"index": 0, "message": message, "finish_reason": finish}
            h._json(200, {**base, "object": "chat.completion", "choices": [choice], "usage": usage})
            return

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            return {**base, "object": "chat.completion.chunk", "choices": [choice]}

        frames = [chunk({"role": "assistant", "content": ""})]
        frames += [chunk({field: p}) for p in _pieces(thinking, self.words_per_chunk)]
        frames += [chunk({"content": p}) for p in _pieces(content, self.words_per_chunk)]
        if calls:
            frames.append(chunk({"tool_calls": [{"index": i, **c} for i, c in enumerate(calls)]}))
        frames.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            frames.append(
                {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}
            )
        drop = reply.drop_after_chunks
        if drop is None:
            drop = self.drop_after_chunks
        h._stream(frames, drop, self.chunk_delay_s, sse=True)


def _openai_error(h: _Handler, status: int, message: str, code: str) -> None:
    kind = "invalid_request_error" if status < 500 else "server_error"
    h._json(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})
