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

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from local2_testkit.brains import (
    Brain,
    Reply,
    RuleBrain,
    ThinkMode,
    tool_names,
)
from local2_testkit.obeying import ObeyingBrain
from local2_testkit.ollama_frames import (
    OpenAICompletion,
    as_chat,
    format_problem,
    merge_frames,
    ollama_frames,
    openai_as_chat,
)
from local2_testkit.ollama_http import OllamaHandler, OllamaHTTPServer, openai_error
from local2_testkit.ollama_records import (
    DEFAULT_MODELS,
    EMBED_DIM,
    OLLAMA_VERSION,
    FakeModel,
    Recorded,
    Served,
    canonical,
    embed_payload,
    hash_embedding,
    is_embedding_model,
    key_matches,
    openai_models_payload,
    show_payload,
    tag_payload,
)
from local2_testkit.scripted_brains import LoopBrain, ScriptBrain

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
            self.specs[canonical(spec.name)] = spec
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
        self.lock = threading.Lock()  # guards the recordings, shared with the handler
        self._stopping = threading.Event()
        self._httpd: OllamaHTTPServer | None = None
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
        self.specs[canonical(name)] = FakeModel(name, caps, context_length, parameter_size)
        if self._known(name) is None:
            self.models.append(name)

    def spec(self, name: str) -> FakeModel:
        return self.specs.get(canonical(name)) or FakeModel(name)

    def start(self) -> FakeOllama:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = OllamaHTTPServer(("127.0.0.1", self._port), OllamaHandler)
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

    @property
    def requests(self) -> list[dict[str, Any]]:  # bodies: JSON as clients sent them
        """Every request body received, in order (GET/HEAD ones are ``{}``)."""
        with self.lock:
            return [r.body for r in self.log]

    def bodies(self, path: str) -> list[dict[str, Any]]:  # body: JSON as the client sent it
        with self.lock:
            return [r.body for r in self.log if r.path == path]

    @property
    def chat_requests(self) -> list[dict[str, Any]]:  # bodies: JSON as clients sent them
        return self.bodies("/api/chat")

    @property
    def embed_requests(self) -> list[dict[str, Any]]:  # bodies: JSON as clients sent them
        return self.bodies("/api/embed")

    @property
    def openai_requests(self) -> list[dict[str, Any]]:  # bodies: JSON as clients sent them
        return self.bodies("/v1/chat/completions")

    @property
    def openai_url(self) -> str:
        """Base URL for an OpenAI client (``base_url``)."""
        return f"{self.url}/v1"

    def record(self, method: str, path: str, body: dict[str, Any]) -> None:  # body: JSON as sent
        with self.lock:
            self.log.append(Recorded(method, path, body))

    def count_line(self) -> None:
        with self.lock:
            self.lines_sent += 1

    def _known(self, model: str) -> str | None:
        wanted = canonical(model)
        return next((m for m in self.models if canonical(m) == wanted), None)

    # body: the request's JSON, as the client sent it
    def route(self, h: OllamaHandler, method: str, path: str, body: dict[str, Any]) -> None:
        if path == "/" and method in ("GET", "HEAD"):
            h.send_text(200, "Ollama is running", head_only=method == "HEAD")
        elif path == "/api/version" and method == "GET":
            h.send_json(200, {"version": OLLAMA_VERSION})
        elif path in ("/api/tags", "/api/ps") and method == "GET":
            h.send_json(200, {"models": [tag_payload(m, self.spec(m)) for m in self.models]})
        elif path == "/api/show" and method == "POST":
            self._show(h, body)
        elif path in ("/api/chat", "/api/generate") and method == "POST":
            self._generate(h, path, body)
        elif path in ("/api/embed", "/api/embeddings") and method == "POST":
            self._embed(h, path, body)
        elif path.startswith("/v1/") and not key_matches(self.api_key, h.headers):
            openai_error(h, 401, "Incorrect API key provided.", "invalid_api_key")
        elif path == "/v1/models" and method == "GET":
            h.send_json(200, openai_models_payload(self.models))
        elif path == "/v1/chat/completions" and method == "POST":
            self._openai_chat(h, body)
        else:
            h.send_text(404, "404 page not found")

    def _show(self, h: OllamaHandler, body: dict[str, Any]) -> None:  # body: JSON as sent
        name = str(body.get("model") or body.get("name") or "")
        model = self._known(name)
        if model is None:
            h.send_json(404, {"error": f"model '{name}' not found"})
            return
        h.send_json(200, show_payload(model, self.spec(model), self.embed_dim))

    def _not_found(self, h: OllamaHandler, name: str) -> None:
        h.send_json(404, {"error": f'model "{name}" not found, try pulling it first'})

    def _embed(self, h: OllamaHandler, path: str, body: dict[str, Any]) -> None:  # JSON as sent
        name = str(body.get("model") or "")
        if self._known(name) is None:
            self._not_found(h, name)
            return
        h.send_json(200, embed_payload(path, body, self.embed_dim))

    def _generate(self, h: OllamaHandler, path: str, body: dict[str, Any]) -> None:  # JSON as sent
        name = str(body.get("model") or "")
        if not name:
            h.send_json(400, {"error": "model is required"})
            return
        model = self._known(name)
        if model is None:
            self._not_found(h, name)
            return
        caps = self.spec(model).caps()
        if "completion" not in caps:
            h.send_json(400, {"error": f'"{name}" does not support {path.rsplit("/", 1)[-1]}'})
            return
        wanted = [("tools", bool(body.get("tools"))), ("thinking", body.get("think") is True)]
        for capability, asked in wanted:
            if asked and capability not in caps:  # Ollama refuses, it does not ignore
                h.send_json(400, {"error": f'"{name}" does not support {capability}'})
                return
        request = body if path == "/api/chat" else as_chat(body)
        reply = self._reply(
            request, lambda status, text: h.send_json(status, {"error": text}), h.client_gone
        )
        if reply is None:
            return
        if reply.thinking and "thinking" not in caps:  # such a model does not think aloud
            reply = replace(reply, thinking="")
        problem = format_problem(request.get("format"), reply.content)
        if problem is not None:
            self.format_violations.append(problem)
        mode = reply.think_mode or self.think_mode
        frames = ollama_frames(path, name, request, reply, mode, self.words_per_chunk)
        if body.get("stream", True) is False:
            h.send_json(200, merge_frames(frames))
            return
        drop = reply.drop_after_chunks
        if drop is None:
            drop = self.drop_after_chunks
        gap = self.chunk_delay_s if reply.chunk_delay_s is None else reply.chunk_delay_s
        h.send_stream(frames, drop, gap)

    def _reply(
        self,
        request: dict[str, Any],  # the chat request as the client sent it (JSON)
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
        with self.lock:
            return [r for r in self.served if r.closed_by_client]

    def _openai_chat(self, h: OllamaHandler, body: dict[str, Any]) -> None:  # body: JSON as sent
        name = str(body.get("model") or "")
        if self._known(name) is None or is_embedding_model(name):
            openai_error(h, 404, f"The model `{name}` does not exist.", "model_not_found")
            return
        request = openai_as_chat(body)
        reply = self._reply(
            request,
            lambda status, text: openai_error(h, status, text, "server_error"),
            h.client_gone,
        )
        if reply is None:
            return
        completion = OpenAICompletion(
            f"chatcmpl-{len(self.log)}", name, self.openai_reasoning_field, self.words_per_chunk
        )
        answer = completion.answer(body, request, reply, reply.think_mode or self.think_mode)
        if isinstance(answer, dict):
            h.send_json(200, answer)
            return
        frames = answer
        drop = reply.drop_after_chunks
        if drop is None:
            drop = self.drop_after_chunks
        h.send_stream(frames, drop, self.chunk_delay_s, sse=True)
