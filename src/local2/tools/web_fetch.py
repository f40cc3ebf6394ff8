"""The ``web_fetch`` tool: download one page safely and return the text the model needs.

Fetching is hostile ground, so every hop is vetted by :class:`NetGuard` and the request is
sent to the vetted address (Host header and TLS SNI keep the name); redirects are followed
by hand and re-vetted; the body is streamed with a byte cap that also bounds decompression
(a gzip bomb is refused); and one deadline covers the whole fetch (DNS, connects,
redirects, a server trickling one byte at a time, and extraction). The download is async
because ``asyncio.timeout`` bounds it all, where per-read timeouts do not; extraction runs
in a limited worker process (``extract_worker``, on :mod:`local2.bounded`) that is killed at
the deadline. Either stops early when the tool call is cancelled (``ToolContext.cancel``).

Long pages are cut to the passages most relevant to the question (the turn's query plus the
model's arguments), within a share of ``num_ctx`` (``passages``). A PDF or office file is
read by the document worker instead, under a larger cap and a longer deadline, and its
passages are picked across its pages, each under its page (:mod:`.fetch_document`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import ssl
import threading
import time
import zlib
from collections.abc import Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

import httpx

from local2.bounded import WorkerPool
from local2.config import DocumentsSettings, ToolSchema, WebFetchSettings
from local2.contracts import WEB_FETCH
from local2.documents import Document, Favor, clean_text
from local2.errors import (
    ExtractionCancelled,
    ExtractionFailed,
    ExtractionTimeout,
    FetchRefused,
    ToolError,
)
from local2.library import Fetched
from local2.tools._base import ToolContext, ToolResult, declare
from local2.tools.extract_worker import POOL
from local2.tools.fetch_document import (
    VAGUE_TYPES,
    DocumentOptions,
    Reader,
    document_result,
    is_document,
)
from local2.tools.netguard import NetGuard, Resolver, Target, system_resolve

log = logging.getLogger(__name__)
# What the model is told about it: written here only (generator.tools may tune it).
WEB_FETCH_TOOL = declare(
    ToolSchema(
        name=WEB_FETCH,
        description=(
            "Fetch the main text of a specific web page. Use after web_search when a "
            "snippet is not enough, or when the user gives a URL."
        ),
        parameters={
            "type": "object",
            "properties": {
                "url": {
                    "type": "string",
                    "description": "Full URL starting with http:// or https:// (or "
                    "corpus:// from web_search results)",
                },
                "query": {
                    "type": "string",
                    "description": "What you are looking for on the page (long "
                    "pages are cut to the passages about it)",
                },
            },
            "required": ["url"],
        },
    )
)


T = TypeVar("T")
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {"application/json", "application/ld+json", "application/xml", "application/javascript"}
)
_TEXT_CONTROLS = frozenset({9, 10, 12, 13, 27})
CHARS_PER_TOKEN = 3.0  # on the safe side: English runs ~4, code and other scripts fewer
MAX_RATIO = 100  # decompressed/compressed beyond this, past the byte cap, is a bomb
_POLL_S = 0.05
SNIFF_BYTES = 4096  # a body labelled application/octet-stream is told by this much of it

# Name resolution blocks; it runs here so the fetch deadline can abandon a hung lookup
# without asyncio.run() waiting for it on exit.
_DNS_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="local2-dns")


class Keeper(Protocol):
    """Who keeps what a fetch read (the library of what was read, :mod:`.library_keep`)."""

    def wants(self, ctx: ToolContext | None) -> bool: ...

    def keep(self, fetched: Fetched, ctx: ToolContext | None) -> None: ...


@dataclass
class Download:
    """What came back from the last hop."""

    url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes
    truncated: bool
    redirects: list[str]
    document: bool = False  # a PDF or office file, read by the document worker


@dataclass
class _Call:
    """One fetch's deadline, which a document's response moves to its own (longer) one."""

    started: float
    deadline: float
    timeout_s: float
    scope: asyncio.Timeout | None = None

    def extend(self, timeout_s: float) -> None:
        """Let the fetch run ``timeout_s`` from its start (never shorter than it was)."""
        deadline = self.started + timeout_s
        if deadline <= self.deadline:
            return
        self.deadline, self.timeout_s = deadline, timeout_s
        if self.scope is not None:
            loop = asyncio.get_running_loop()
            self.scope.reschedule(loop.time() + deadline - time.monotonic())


class _Cancelled(Exception):
    """The tool call was cancelled (the graph gave up on it)."""


class _Decoder:
    """Content-Encoding decoding that never produces more than asked (a gzip bomb stays small)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding.strip().lower()
        self.consumed = 0  # compressed bytes turned into output so far
        self._z: Any = None
        if self.encoding in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.encoding == "deflate":
            self._z = zlib.decompressobj()
        elif self.encoding not in ("", "identity"):
            raise ToolError(f"fetch error: unsupported content encoding {encoding!r}")

    @property
    def compressed(self) -> bool:
        return self._z is not None

    def decode(self, data: bytes, room: int) -> bytes:
        """At most ``room`` bytes of output for ``data``."""
        if self._z is None:
            self.consumed += len(data)
            return data[:room]
        try:
            out: bytes = self._z.decompress(data, room)
        except zlib.error:
            if self.encoding != "deflate" or self.consumed:
                raise
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
            out = self._z.decompress(data, room)
        self.consumed += len(data) - len(self._z.unconsumed_tail)
        return out


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _kind(content_type: str, head: bytes) -> str:
    """``html``, ``text``, ``pdf`` or ``binary``, from the header and the first bytes."""
    if head.lstrip()[:5] == b"%PDF-" or content_type == "application/pdf":
        return "pdf"
    if _looks_binary(head[:2048]):
        return "binary"
    if content_type in HTML_TYPES:
        return "html"
    if content_type.startswith("text/") or content_type in TEXT_TYPES:
        return "text"
    if content_type.endswith(("+json", "+xml")):
        return "text"
    if not content_type:
        sniff = head.lstrip()[:100].lower()
        return "html" if sniff.startswith((b"<!doctype html", b"<html")) else "text"
    return "binary"


def _looks_binary(head: bytes) -> bool:
    """More than 5% control bytes (a stray NUL in a text page is just stripped later)."""
    controls = sum(1 for b in head if b < 32 and b not in _TEXT_CONTROLS)
    return controls > len(head) * 0.05


RESULT_HEAD = "\nExtracted text:\n"


def _url_words(url: str) -> str:
    """The words of a URL's path and query (``/wiki/Tidal_mill`` -> ``wiki Tidal mill``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return re.sub(r"[\W_]+", " ", f"{parts.path} {parts.query}").strip()


def question_for(args: Mapping[str, Any], ctx: ToolContext | None) -> str:
    """What the page is read for: the turn's query and the model's own arguments."""
    parts = [ctx.query if ctx is not None else ""]
    for key, value in args.items():
        if isinstance(value, str):
            parts.append(_url_words(value) if key == "url" else value)
    return "\n".join(p for p in parts if p.strip())


async def _unless_cancelled(coro: Coroutine[Any, Any, T], cancel: threading.Event | None) -> T:
    task = asyncio.ensure_future(coro)
    while cancel is not None and not task.done():
        if cancel.is_set():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise _Cancelled
        await asyncio.wait({task}, timeout=_POLL_S)
    return await task


def _host_header(url: httpx.URL) -> str:
    host = url.host
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{url.port}" if url.port else host


class WebFetch:
    """Callable tool body; ``resolver``, ``transport`` and ``verify`` are injectable for tests.

    ``num_ctx`` (the chat model's context, in tokens) sets how much page text the model is
    shown, unless ``max_chars`` is configured.
    """

    def __init__(
        self,
        cfg: WebFetchSettings,
        resolver: Resolver = system_resolve,
        transport: httpx.AsyncBaseTransport | None = None,
        favor: Favor = "precision",
        verify: ssl.SSLContext | bool = True,
        num_ctx: int = 32000,
        pool: WorkerPool = POOL,
        documents: DocumentsSettings | None = None,
        read_document: Reader | None = None,
    ):
        self.cfg = cfg
        self.documents = documents or DocumentsSettings()
        self.read_document = read_document
        self._verify = verify
        self.guard = NetGuard(cfg.allow_hosts, resolver)
        self.favor = favor
        self._transport = transport
        self.pool = pool
        self.budget_chars = cfg.max_chars or int(num_ctx * cfg.context_share * CHARS_PER_TOKEN)
        self.keeper: Keeper | None = None  # set by the wiring when the library keeps reads

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        url = args.get("url") if isinstance(args, Mapping) else None
        if not isinstance(url, str) or not url.strip():
            raise ToolError("missing url argument")
        url = clean_text(url).strip()
        cancel = ctx.cancel if ctx is not None else None
        now = time.monotonic()
        call = _Call(now, now + self.cfg.timeout_s, self.cfg.timeout_s)
        sink: list[Fetched] | None = [] if self.keeper and self.keeper.wants(ctx) else None
        try:
            self.pool.prepare(self.cfg.extract_memory_mb)  # starts while the page downloads
            download = run_sync(self._download_within(url, call, cancel))
            question = question_for(args, ctx)
            result = self._render(url, download, question, call.deadline, cancel, sink)
        except (TimeoutError, httpx.TimeoutException, ExtractionTimeout):
            raise ToolError(f"fetch timeout after {call.timeout_s:g}s: {url}") from None
        except (_Cancelled, ExtractionCancelled):
            raise ToolError(f"fetch cancelled: {url}") from None
        for fetched in sink or []:  # only what was read: a refused or failed fetch keeps none
            self._keep(fetched, ctx)
        return result

    def _keep(self, fetched: Fetched, ctx: ToolContext | None) -> None:
        try:
            if self.keeper is not None:
                self.keeper.keep(fetched, ctx)
        except Exception as exc:  # the read stands; only its copy is lost
            log.warning("web_fetch: could not keep %s in the library: %s", fetched.url, exc)

    @property
    def longest_s(self) -> float:
        """The longest a fetch may take (a document's deadline, when that is longer)."""
        return max(self.cfg.timeout_s, self.cfg.document_timeout_s)

    async def _download_within(
        self, url: str, call: _Call, cancel: threading.Event | None
    ) -> Download:
        async with asyncio.timeout(call.deadline - time.monotonic()) as scope:
            call.scope = scope
            return await _unless_cancelled(self._download(url, call), cancel)

    async def _vet(self, url: str) -> Target:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(_DNS_POOL, self.guard.vet, url)
        except FetchRefused as exc:
            raise ToolError(f"fetch error: {exc}") from None

    async def _open(self, client: httpx.AsyncClient, target: Target) -> httpx.Response:
        """Send the request to each vetted address in turn until one connects."""
        headers = {"Host": _host_header(target.url)}
        extensions: dict[str, str] = {}  # httpx's request extensions: the TLS name
        is_literal = _is_ip(target.host)
        if target.url.scheme == "https" and not is_literal:
            extensions["sni_hostname"] = target.host
        last: Exception | None = None
        for address in target.addresses:
            pinned = target.url.copy_with(host=address)
            request = client.build_request("GET", pinned, headers=headers, extensions=extensions)
            try:
                return await client.send(request, stream=True)
            except httpx.ConnectError as exc:
                last = exc
        raise ToolError(f"fetch error: cannot connect to {target.host} ({last})")

    async def _download(self, url: str, call: _Call) -> Download:
        redirects: list[str] = []
        async with httpx.AsyncClient(
            transport=self._transport,
            verify=self._verify,
            trust_env=False,
            follow_redirects=False,
            timeout=httpx.Timeout(self.cfg.timeout_s),
            headers={
                "User-Agent": self.cfg.user_agent,
                "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
                "Accept-Encoding": "gzip, deflate",  # the ones _Decoder bounds
            },
        ) as client:
            current = url
            while True:
                target = await self._vet(current)
                try:
                    response = await self._open(client, target)
                except httpx.TimeoutException:
                    raise
                except httpx.TransportError as exc:
                    raise ToolError(f"fetch error: {type(exc).__name__}: {exc}") from None
                try:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECT_STATUSES and location:
                        if len(redirects) >= self.cfg.max_redirects:
                            raise ToolError(
                                f"fetch error: too many redirects (more than "
                                f"{self.cfg.max_redirects})"
                            )
                        current = str(target.url.join(location))
                        redirects.append(current)
                        continue
                    if not 200 <= response.status_code < 300:
                        raise ToolError(f"fetch failed: {response.status_code}")
                    return await self._read(response, str(target.url), redirects, call)
                finally:
                    await response.aclose()

    async def _read(
        self, response: httpx.Response, url: str, redirects: list[str], call: _Call
    ) -> Download:
        content_type = response.headers.get("content-type", "")
        media = content_type.split(";", 1)[0].strip().lower()
        document = is_document(media, url)
        sniff = not document and media in VAGUE_TYPES  # decided by the first bytes
        if document:
            call.extend(self.cfg.document_timeout_s)
        elif media and not sniff and _kind(media, b"") in ("pdf", "binary"):
            raise ToolError(_unsupported(media))
        decoder = _Decoder(response.headers.get("content-encoding", ""))
        cap = self.document_cap if document else self.cfg.max_bytes
        body = bytearray()
        truncated = False
        try:
            async for chunk in response.aiter_raw():
                room = max(cap, SNIFF_BYTES) if sniff else cap
                body += decoder.decode(chunk, room + 1 - len(body))
                if sniff and len(body) >= SNIFF_BYTES:
                    sniff, document = False, self._sniffed(media, url, bytes(body), call)
                    cap = self.document_cap if document else self.cfg.max_bytes
                if len(body) > cap:
                    truncated = True
                    del body[cap:]
                    break
        except zlib.error as exc:
            raise ToolError(f"fetch error: cannot decode the response ({exc})") from None
        except httpx.TransportError as exc:
            if isinstance(exc, httpx.TimeoutException):
                raise
            raise ToolError(f"fetch error: {type(exc).__name__}: {exc}") from None
        if sniff:  # the whole body was shorter than a sniff
            document = self._sniffed(media, url, bytes(body), call)
        if truncated and decoder.compressed and cap > MAX_RATIO * max(decoder.consumed, 1):
            raise ToolError(
                f"fetch error: refused a {decoder.encoding} response that expands more than "
                f"{MAX_RATIO}-fold past the {cap:,}-byte cap (a decompression bomb)"
            )
        if truncated and document:
            raise _too_large(cap, "max_document_bytes")
        charset = response.charset_encoding
        return Download(
            url, response.status_code, media, charset, bytes(body), truncated, redirects, document
        )

    def _sniffed(self, media: str, url: str, head: bytes, call: _Call) -> bool:
        """Whether a vaguely labelled body is a document (its deadline then moves), from its
        first bytes; True, or False for text, else refused as binary."""
        if is_document(media, url, head):
            call.extend(self.cfg.document_timeout_s)
            return True
        if media and _kind(media, head) in ("pdf", "binary"):
            raise ToolError(_unsupported(media))
        return False

    @property
    def document_cap(self) -> int:
        """The download cap for a document: web.fetch's, within what the reader takes."""
        return min(self.cfg.max_document_bytes, self.documents.max_bytes)

    def _render(
        self,
        requested: str,
        dl: Download,
        question: str,
        deadline: float,
        cancel: threading.Event | None,
        sink: list[Fetched] | None = None,
    ) -> ToolResult:
        if dl.document or is_document(dl.content_type, dl.url, dl.body[:65536]):
            return self._render_document(requested, dl, question, deadline, cancel, sink)
        kind = _kind(dl.content_type, dl.body[:4096])
        if kind in ("pdf", "binary"):
            raise ToolError(_unsupported(dl.content_type or "unknown", kind))
        if dl.truncated:  # cut at web.fetch.max_bytes: shown as read, never kept as the page
            sink = None
        left = deadline - time.monotonic()
        header = {
            "kind": kind,
            "charset": dl.charset,
            "url": dl.url,
            "favor": self.favor,
            "question": question,
            "budget_chars": self.budget_chars,
            "max_elements": self.cfg.max_elements,
            "extract_s": left - min(3.0, left / 3),  # the rest for the linear fallback
            "cpu_s": left + 1,
            "keep_text": sink is not None,
        }
        try:
            page = self.pool.run(header, dl.body, self.cfg.extract_memory_mb, deadline, cancel)
        except ExtractionFailed as exc:
            raise ToolError(f"fetch error: {exc}") from None
        data = {
            **_fetched(requested, dl),
            "chars": page["chars"],
            "chars_shown": page["chars_shown"],
            "truncated_chars": page["chars_shown"] < page["chars"],
            "passages_shown": page["passages_shown"],
            "passages_total": page["passages_total"],
            "extraction": page["method"],
        }
        if sink is not None and page.get("full_text"):
            text = str(page["full_text"])
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            title = first[:100] if len(first) <= 100 else ""
            sink.append(
                Fetched(requested, dl.url, title, kind, ((1, text),), None, dl.content_type)
            )
        return ToolResult(text=f"URL: {dl.url}{RESULT_HEAD}{page['text']}", data=data)

    def _render_document(
        self,
        requested: str,
        dl: Download,
        question: str,
        deadline: float,
        cancel: threading.Event | None,
        sink: list[Fetched] | None = None,
    ) -> ToolResult:
        if dl.truncated:  # a document served as a page, cut at the page's cap
            raise _too_large(self.cfg.max_bytes, "max_bytes")
        options: DocumentOptions = (
            {} if self.read_document is None else {"reader": self.read_document}
        )
        if sink is not None:
            options["seen"] = lambda doc: sink.append(_fetched_document(requested, dl, doc))
        text, data = document_result(
            dl.url,
            dl.body,
            dl.content_type,
            question,
            self.budget_chars,
            self.documents,
            deadline,
            cancel,
            **options,
        )
        data.update(_fetched(requested, dl))
        return ToolResult(text=f"URL: {dl.url}{RESULT_HEAD}{text}", data=data)


def _fetched(requested: str, dl: Download) -> dict[str, Any]:  # for ToolResult.data
    """What a result's data says of the download (a page's or a document's)."""
    return {
        "url": requested,
        "final_url": dl.url,
        "redirects": dl.redirects,
        "status": dl.status,
        "content_type": dl.content_type,
        "bytes": len(dl.body),
        "truncated_bytes": dl.truncated,
    }


def _fetched_document(requested: str, dl: Download, document: Document) -> Fetched:
    """A document as the library keeps it: its pages and its original file."""
    pages = tuple((p.number, p.text) for p in document.pages)
    return Fetched(
        requested, dl.url, document.title, document.format, pages, dl.body, dl.content_type
    )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _too_large(cap: int, key: str) -> ToolError:
    return ToolError(
        f"fetch error: the document is larger than the {cap:,}-byte download cap (web.fetch.{key})",
        fix="Download it and add it as your own document (local2 documents add), or raise "
        f"web.fetch.{key} in web.yaml.",
    )


def _unsupported(media: str, kind: str | None = None) -> str:
    if kind == "pdf" or media == "application/pdf":
        return f"fetch error: the response says it is a PDF ({media}) but is not one"
    return (
        f"fetch error: unsupported content type {media} (binary); web pages, text and "
        "documents (PDF, DOCX, PPTX, ODT, EPUB) only"
    )
