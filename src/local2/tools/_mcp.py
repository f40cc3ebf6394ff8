"""Tools from MCP servers, offered to the model like built-in ones.

Each server in ``mcp.yaml`` is reached with the ``mcp`` SDK's :class:`mcp.Client` (stdio
subprocess or streamable HTTP); its tools become :class:`Tool` objects named
``<server>__<tool>`` with the server's description and JSON schema, filtered by the
server's allow/deny lists. (``langchain-mcp-adapters`` 0.3 does not import against the
installed ``mcp`` 2.x, and we need plain ``Tool`` objects anyway, so the SDK is used directly.)

Why persistent sessions: one session per server is held open on a background event-loop
thread, because stdio servers take seconds to start (about 2 s for the Python example) and
many servers keep state between calls (a browser, an open database). ``Tool.run`` is called
from the graph's worker threads, so it hands the coroutine to that loop and waits, bounded by
the server's ``timeout_s``. A session that fails (process died, connection lost) or times out
is closed and reopened on the next call, so a crashed stdio server is restarted and a wedged
one is killed. Each session is opened and closed by one owner task, as anyio's scopes require.

A stdio server's ``env`` may say ``${NAME}`` to pass a key from our environment instead of
writing it in YAML. Errors say which server failed but never carry the values of its ``env``
(secrets) or the credentials in its URL. A stdio server's stderr goes to
``<data_dir>/mcp/<server>.log``.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import hashlib
import json
import logging
import os
import re
import string
import threading
from collections.abc import Coroutine, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, TypeVar
from urllib.parse import urlsplit, urlunsplit

import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from local2.config import McpServer, Settings
from local2.errors import ToolError
from local2.tools._base import Tool, ToolContext

log = logging.getLogger(__name__)

SEPARATOR = "__"
MAX_NAME = 64  # OpenAI's limit on function names; Ollama accepts the same alphabet
MAX_DESCRIPTION = 1024
_NAME_OK = re.compile(r"[^A-Za-z0-9_-]")
_CLOSE_TIMEOUT_S = 8.0  # stdio_client waits 2 s, then SIGTERM, 2 s, then SIGKILL
_GRACE_S = 2.0  # the worker thread waits this much past the call's own timeout

T = TypeVar("T")


@dataclass
class McpServerStatus:
    """What ``local2 doctor`` reports for one configured server."""

    name: str
    ok: bool
    tools: list[str]
    error: str | None


# ---------------------------------------------------------------- names, text, redaction


def tool_name(server: str, tool: str) -> str:
    """``<server>__<tool>`` in the function-name alphabet, at most 64 characters."""
    name = _NAME_OK.sub("_", f"{server}{SEPARATOR}{tool}")
    if len(name) > MAX_NAME:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


def safe_url(url: str) -> str:
    """The URL without credentials or query string, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def server_env(server: McpServer) -> dict[str, str]:
    """The server's ``env`` with ``${NAME}`` taken from our environment (keeps keys out of YAML)."""
    return {k: string.Template(v).safe_substitute(os.environ) for k, v in server.env.items()}


def redact(text: str, server: McpServer) -> str:
    """Remove the server's env values and URL secrets from a message."""
    if server.url:
        text = text.replace(server.url, safe_url(server.url))
        parts = urlsplit(server.url)
        for secret in (parts.password, parts.username, parts.query):
            if secret and len(secret) >= 3:
                text = text.replace(secret, "***")
    for value in [*server.env.values(), *server_env(server).values()]:
        if len(value) >= 3:
            text = text.replace(value, "***")
    return text


def describe(exc: BaseException) -> str:
    """A one-line reason from an exception, looking inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.error.message
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def result_text(result: mcp_types.CallToolResult) -> str:
    """The text the model reads: text blocks joined, other blocks named, else the JSON."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.EmbeddedResource):
            res = block.resource
            text = getattr(res, "text", None)
            parts.append(text if text is not None else f"[resource {res.uri}]")
        else:
            kind = getattr(block, "type", "content")
            mime = getattr(block, "mime_type", None)
            parts.append(f"[{kind}{': ' + mime if mime else ''}]")
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return "\n".join(parts)


def _timeout_text(seconds: float) -> str:
    return f"timeout after {seconds:g}s"


# ---------------------------------------------------------------- the background loop


class _LoopThread:
    """One asyncio loop on a daemon thread; every MCP session lives on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="local2-mcp", daemon=True
        )
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)


_loop_lock = threading.Lock()
_loop: _LoopThread | None = None


def _background() -> _LoopThread:
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = _LoopThread()
        return _loop


def _wait(coro: Coroutine[Any, Any, T], timeout_s: float) -> T:
    """Run ``coro`` on the background loop from a plain thread, bounded by ``timeout_s``."""
    future = _background().submit(coro)
    try:
        return future.result(timeout=timeout_s + _GRACE_S)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise ToolError(_timeout_text(timeout_s)) from None


# ---------------------------------------------------------------- one server's session

_closing: set[asyncio.Task[None]] = set()  # sessions being closed in the background
_Session = tuple["asyncio.Task[None]", asyncio.Event, "asyncio.Future[Client]"]


class _Connection:
    """A persistent session to one server, reopened after a failure."""

    def __init__(self, server: McpServer, log_dir: Path) -> None:
        self.server = server
        self._log_dir = log_dir
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._ready: asyncio.Future[Client] | None = None
        self._owner: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None

    def _make_client(self, errlog: TextIO | None) -> Client:
        server = self.server
        if server.url:
            return Client(server.url, read_timeout_seconds=server.timeout_s)
        assert server.command is not None and errlog is not None
        params = StdioServerParameters(
            command=server.command, args=list(server.args), env=server_env(server) or None
        )
        return Client(stdio_client(params, errlog=errlog), read_timeout_seconds=server.timeout_s)

    async def _hold(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        """Owner task: enter the client, hand it over, and exit it when told to."""
        errlog: TextIO | None = None
        try:
            if self.server.command:
                self._log_dir.mkdir(parents=True, exist_ok=True)
                errlog = (self._log_dir / f"{self.server.name}.log").open("a", encoding="utf-8")
            async with self._make_client(errlog) as client:
                ready.set_result(client)
                await stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            log.debug("mcp server %s session ended: %s", self.server.name, describe(exc))
        except BaseException:
            ready.cancel()
            raise
        finally:
            if errlog is not None:
                errlog.close()

    async def client(self) -> Client:
        """The open session, starting the server or reconnecting if there is none."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._client is not None and self._owner is not None and not self._owner.done():
                return self._client
            self.discard()
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[Client] = loop.create_future()
            stop = asyncio.Event()
            owner = loop.create_task(self._hold(ready, stop), name=f"mcp-{self.server.name}")
            self._stop, self._owner, self._ready = stop, owner, ready
            try:
                self._client = await asyncio.shield(ready)
            except asyncio.CancelledError:
                self.discard()
                raise
            return self._client

    def _detach(self, client: Client | None) -> _Session | None:
        if client is not None and client is not self._client:
            return None  # already replaced by a newer session
        owner, stop, ready = self._owner, self._stop, self._ready
        self._client, self._owner, self._stop, self._ready = None, None, None, None
        if owner is None or stop is None or ready is None or owner.done():
            return None
        return owner, stop, ready

    def discard(self, client: Client | None = None) -> None:
        """Forget the session (if still ``client``) now; close it in the background."""
        detached = self._detach(client)
        if detached is not None:
            task = asyncio.get_running_loop().create_task(_finish(*detached))
            _closing.add(task)
            task.add_done_callback(_closing.discard)

    async def reset(self) -> None:
        """Close the session and wait until it is closed (the server process has exited)."""
        detached = self._detach(None)
        if detached is not None:
            await _finish(*detached)

    async def list_tools(self) -> list[mcp_types.Tool]:
        async with asyncio.timeout(self.server.timeout_s):
            client = await self.client()
            tools: list[mcp_types.Tool] = []
            cursor: str | None = None
            for _ in range(100):  # a paginator that never ends must not hang start-up
                page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
            return tools

    # args: the call's arguments as the model wrote them (JSON), for the MCP server to check
    async def call(self, name: str, args: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call a tool; raise ``ToolError`` for a timeout or a failed server."""
        timeout = self.server.timeout_s
        client: Client | None = None
        try:
            async with asyncio.timeout(timeout):
                client = await self.client()
                return await client.call_tool(name, args, read_timeout_seconds=timeout)
        except TimeoutError:
            self.discard(client)
            raise ToolError(_timeout_text(timeout)) from None
        except MCPError as exc:
            self.discard(client)
            if exc.error.code == mcp_types.REQUEST_TIMEOUT:
                raise ToolError(_timeout_text(timeout)) from None
            raise self.failed(exc) from None
        except Exception as exc:
            self.discard(client)
            raise self.failed(exc) from None

    def failed(self, exc: BaseException) -> ToolError:
        """A failure naming the server, with its secrets removed."""
        message = f"mcp server {self.server.name} failed: {describe(exc)}"
        return ToolError(redact(message, self.server))


async def _finish(
    owner: asyncio.Task[None], stop: asyncio.Event, ready: asyncio.Future[Client]
) -> None:
    """Let the owner task exit its client; cancel it if still connecting or too slow."""
    stop.set()
    done: set[asyncio.Task[None]] = set()
    if ready.done():  # a half-open session cannot see ``stop``: cancel it at once
        done, _ = await asyncio.wait({owner}, timeout=_CLOSE_TIMEOUT_S)
    if not done:
        owner.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(owner, _CLOSE_TIMEOUT_S)


# ---------------------------------------------------------------- the public API


_pools_lock = threading.Lock()
_connections: list[_Connection] = []


class _McpCall:
    """``Tool.run`` for one remote tool: keeps its connection so it can be closed."""

    def __init__(self, conn: _Connection, remote: str, name: str) -> None:
        self.conn, self.remote, self.name = conn, remote, name

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        result = _wait(self.conn.call(self.remote, dict(args)), self.conn.server.timeout_s)
        text = result_text(result)
        if result.is_error:
            raise ToolError(text or f"{self.name} failed")
        return text


def _make_tool(conn: _Connection, spec: mcp_types.Tool, name: str) -> Tool:
    description = (spec.description or spec.title or spec.name).strip()
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 3] + "..."
    parameters = dict(spec.input_schema or {})
    parameters.setdefault("type", "object")
    parameters.setdefault("properties", {})
    parameters.pop("title", None)
    run = _McpCall(conn, spec.name, name)
    # Side-effecting unless the server says the tool only reads (``tools.read_only`` and
    # ``tools.side_effecting`` in config can say otherwise); its output is outside content.
    read_only = bool(spec.annotations and spec.annotations.read_only_hint)
    # The graph's own timeout is a backstop; the server's bound reports first.
    return Tool(
        name,
        description,
        parameters,
        run,
        timeout_s=conn.server.timeout_s + _GRACE_S,
        effects="read" if read_only else "write",
        output="untrusted",
    )


def _offered(server: McpServer, remote: str) -> bool:
    if server.allow and remote not in server.allow:
        return False
    return remote not in server.deny


async def _discover(conn: _Connection) -> tuple[list[Tool], McpServerStatus]:
    server = conn.server
    try:
        specs = await conn.list_tools()
    except Exception as exc:
        conn.discard()
        error = _timeout_text(server.timeout_s) if isinstance(exc, TimeoutError) else None
        return [], McpServerStatus(server.name, False, [], error or str(conn.failed(exc)))
    tools = [
        _make_tool(conn, spec, tool_name(server.name, spec.name))
        for spec in specs
        if _offered(server, spec.name)
    ]
    return tools, McpServerStatus(server.name, True, [t.name for t in tools], None)


async def _discover_all(conns: list[_Connection]) -> list[tuple[list[Tool], McpServerStatus]]:
    return list(await asyncio.gather(*(_discover(c) for c in conns)))


def load_mcp_tools(settings: Settings) -> tuple[list[Tool], list[McpServerStatus]]:
    """Start or reach every configured server, list its tools and wrap them.

    A server that fails to start or answer within its ``timeout_s`` is reported in the
    status list (one entry per configured server, in order) and skipped; it never stops
    start-up. Sessions stay open for the calls; :func:`shutdown_mcp` closes them.
    """
    servers = settings.mcp.servers
    conns: list[_Connection] = []
    for server in servers:
        if server.name not in {c.server.name for c in conns}:
            conns.append(_Connection(server, settings.data_dir / "mcp"))
    if not conns:
        return [], []
    budget = max(c.server.timeout_s for c in conns) + _CLOSE_TIMEOUT_S
    try:
        found = dict(
            zip([c.server.name for c in conns], _wait(_discover_all(conns), budget), strict=True)
        )
    except ToolError as exc:  # the background loop itself did not answer
        found = {
            c.server.name: ([], McpServerStatus(c.server.name, False, [], str(exc))) for c in conns
        }
    with _pools_lock:
        _connections.extend(conns)
    tools: list[Tool] = []
    statuses: list[McpServerStatus] = []
    for server in servers:
        if server.name not in found:
            error = f"duplicate server name {server.name!r}: only the first is used"
            statuses.append(McpServerStatus(server.name, False, [], error))
            continue
        server_tools, status = found.pop(server.name)
        taken = {t.name for t in tools}
        kept = [t for t in server_tools if t.name not in taken]
        tools.extend(kept)
        status.tools = [t.name for t in kept]
        statuses.append(status)
        if not status.ok:
            log.warning("mcp server %s skipped: %s", status.name, status.error)
    return tools, statuses


async def _close_all(conns: list[_Connection], drain: bool) -> None:
    await asyncio.gather(*(c.reset() for c in conns), return_exceptions=True)
    if drain and _closing:
        await asyncio.wait(set(_closing), timeout=_CLOSE_TIMEOUT_S)


def shutdown_mcp(tools: Iterable[Tool] | None = None) -> None:
    """Close the sessions behind ``tools`` (default: every session) and stop stdio servers.

    Also run at interpreter exit, so no server process outlives LoCAL2.
    """
    with _pools_lock:
        if tools is None:
            conns = list(_connections)
        else:
            wanted = {id(t.run.conn) for t in tools if isinstance(t.run, _McpCall)}
            conns = [c for c in _connections if id(c) in wanted]
        _connections[:] = [c for c in _connections if c not in conns]
    if _loop is not None:
        with contextlib.suppress(Exception):
            _wait(_close_all(conns, drain=tools is None), 2 * _CLOSE_TIMEOUT_S)


atexit.register(shutdown_mcp)
