"""The ``web_fetch`` tool: download one page safely and return the text the model needs.

Fetching is hostile ground, so every hop is vetted by :class:`NetGuard` and the request is
sent to the vetted address (Host header and TLS SNI keep the name); redirects are followed
by hand and re-vetted; the body is streamed with a byte cap that also bounds decompression
(a gzip bomb is refused); and one deadline covers the whole fetch (DNS, connects,
redirects, a server trickling one byte at a time, and extraction). The download is async
because ``asyncio.timeout`` bounds it all, where per-read timeouts do not; extraction runs
in a limited worker process (``_extract_worker``, on :mod:`local2.bounded`) that is killed at
the deadline. Either stops early when the tool call is cancelled (``ToolContext.cancel``).

Long pages are cut to the passages most relevant to the question (the turn's query plus the
model's arguments), within a share of ``num_ctx`` (``passages``). A PDF or office file is
read by the document worker instead, under a larger cap and a longer deadline, and its
passages are picked across its pages, each under its page (:mod:`.fetch_document`).

SSRF guard: decide whether a URL may be fetched, and which address to connect to.

A model-chosen URL is attacker-controlled input (a web page can tell the model to fetch
``http://169.254.169.254/``). Every hop of a fetch is vetted here: the scheme, the host
name (cloud-metadata names), every address the name resolves to (loopback, private,
link-local, multicast, reserved, unspecified, CGNAT, IPv4 embedded in IPv6), and the
legacy IPv4 spellings ``inet_aton`` accepts (``2130706433``, ``0177.0.0.1``,
``0x7f000001``, ``127.1``). The caller then connects to one of the vetted addresses
(:attr:`Target.addresses`) instead of resolving the name again, which closes the
DNS-rebinding window between check and connect. Residual risk: a trusted host listed in
``allow_hosts`` is not address-checked at all, and an HTTP proxy (which we never use:
``trust_env=False``) would resolve names itself.

``web_fetch`` of a document (PDF, DOCX, PPTX, ODT, EPUB): its pages read in the document
worker (:mod:`local2.documents`), the passages for the question picked across its pages.

A document is told from a web page by its media type, its first bytes or, when the server
labels it vaguely (``application/octet-stream``), the extension of the URL's path. It may be
larger than a page (``web.fetch.max_document_bytes``) and take longer
(``web.fetch.document_timeout_s``); a download cut at the cap is refused, since a truncated
PDF has no trailer to read.

The result keeps web_fetch's shape (``URL: <url>\nExtracted text:\n...``) so every reader
of fetch results goes on working; the text opens with one line saying what the document is
and how to cite a page, then the passages, each page's under its own marker:

    URL: https://example.org/report.pdf
    Extracted text:
    [Document: PDF, 40 pages, "Annual report"; cite a page as https://example.org/report.pdf#page=N]
    [Page 3]
    ...
    [Page 12]
    ...

(:func:`local2.documents._extract.page_sections` splits such text back into its pages.)

What ``web_fetch`` read, kept in the reader's library (``library.keep``): a research
run's reads with ``research`` or ``all``, a chat turn's with ``all``; nothing with ``off``,
nor for a run started with ``keep: off`` (:attr:`ReadingLibrary.run_keep`), whatever the
setting. A fetch that was refused or failed reaches no keeper. Settings with no data
directory (a bare ``Settings()``) keep nothing: there is nowhere to keep it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Coroutine, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Protocol, TypedDict, TypeVar
from urllib.parse import unquote, urlsplit

import httpx

from local2.bounded import WorkerPool
from local2.config import DocumentsSettings, Settings, ToolSchema, WebFetchSettings
from local2.contracts import WEB_FETCH
from local2.documents import (
    Document,
    Favor,
    clean_text,
    declared_format,
    document_note,
    guess_format,
    page_link,
    read_document,
    render_passages,
)
from local2.errors import (
    DocumentUnreadable,
    ExtractionCancelled,
    ExtractionFailed,
    ExtractionTimeout,
    FetchRefused,
    ToolError,
)
from local2.library import Fetched, Reader, ReadingLibrary
from local2.retrieval import pick_passages
from local2.tools._base import ToolContext, ToolResult, declare
from local2.tools._extract_worker import POOL

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]

ALLOWED_SCHEMES = frozenset({"http", "https"})

METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.internal",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.123",  # AWS time sync
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (legacy)
    )
)
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("is_unspecified", "unspecified"),
    ("is_loopback", "loopback"),
    ("is_link_local", "link-local"),
    ("is_multicast", "multicast"),
    ("is_private", "private"),
    ("is_reserved", "reserved"),
    ("is_site_local", "site-local"),
)


@dataclass(frozen=True)
class Target:
    """A vetted hop: the URL as asked, and the addresses it is safe to connect to."""

    url: httpx.URL
    host: str
    port: int
    addresses: tuple[str, ...]
    trusted: bool


def system_resolve(host: str, port: int) -> list[str]:
    """All addresses ``host`` resolves to, in the resolver's order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: dict[str, None] = {}
    for info in infos:
        seen.setdefault(str(info[4][0]).split("%", 1)[0], None)
    return list(seen)


def _legacy_ipv4_part(text: str) -> int | None:
    try:
        if text[:2].lower() == "0x":
            return int(text[2:] or "0", 16)
        if len(text) > 1 and text.startswith("0"):
            return int(text[1:], 8)
        return int(text, 10)
    except ValueError:
        return None


def parse_legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """Parse the forms ``inet_aton`` accepts (1-4 parts, decimal/octal/hex), or None."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or any(not p for p in parts):
        return None
    values = [_legacy_ipv4_part(p) for p in parts]
    if any(v is None or v < 0 for v in values):
        return None
    nums = [int(v) for v in values if v is not None]
    *head, last = nums
    if any(v > 255 for v in head) or last >= 256 ** (5 - len(nums)):
        return None
    value = 0
    for v in head:
        value = value << 8 | v
    value = value << 8 * (5 - len(nums)) | last
    return ipaddress.IPv4Address(value)


def parse_ip_host(host: str) -> IPAddress | None:
    """The IP address a URL host denotes literally (any spelling), or None for a name."""
    bare = host.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        return parse_legacy_ipv4(bare.rstrip("."))


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def refusal_reason(ip: IPAddress) -> str | None:
    """The kind of address ``ip`` is when refused (``loopback``), or None when public."""
    if ip in METADATA_ADDRESSES:
        return "cloud metadata"
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            why = refusal_reason(inner)
            return f"IPv4-embedded {why}" if why else None
    for attr, label in _CATEGORIES:
        if getattr(ip, attr, False):
            return label
    if ip.version == 4 and ip in _CGNAT:
        return "carrier-grade NAT"
    if not ip.is_global:
        return "not globally routable"
    return None


def _norm_host(host: str) -> str:
    return host.strip("[]").rstrip(".").lower()


class NetGuard:
    """Vets URLs against the SSRF rules; ``allow_hosts`` entries skip the address checks.

    An entry is a host name (``localhost``), an IP literal (``127.0.0.1``), a host with a
    port (``localhost:8080``, only that port) or a wildcard suffix (``*.example.org``).
    Matching is on the URL's host as written, never on what it resolves to, so allowing
    ``localhost`` does not allow a redirect to ``127.0.0.1``.
    """

    def __init__(self, allow_hosts: Iterable[str] = (), resolver: Resolver = system_resolve):
        self._allow = [a.strip().lower() for a in allow_hosts if a.strip()]
        self._resolve = resolver

    def is_trusted(self, host: str, port: int) -> bool:
        name = _norm_host(host)
        ip = parse_ip_host(name)
        for entry in self._allow:
            entry_host, entry_port = entry, None
            if entry.count(":") == 1 or entry.startswith("["):
                head, _, tail = entry.rpartition(":")
                if tail.isdigit():
                    entry_host, entry_port = head, int(tail)
            if entry_port is not None and entry_port != port:
                continue
            entry_host = _norm_host(entry_host)
            if entry_host.startswith("*."):
                if name.endswith(entry_host[1:]):
                    return True
                continue
            entry_ip = parse_ip_host(entry_host) if ip is not None else None
            if name == entry_host or (ip is not None and entry_ip == ip):
                return True
        return False

    def vet(self, url: str | httpx.URL) -> Target:
        """Check one hop; raise :class:`FetchRefused` naming the reason."""
        raw = str(url).strip()
        try:
            split = urlsplit(raw)
            explicit_port = split.port
        except ValueError as exc:
            raise FetchRefused(f"invalid URL: {exc}") from None
        scheme = split.scheme.lower()
        if scheme not in ALLOWED_SCHEMES:
            given = f"{scheme}:" if scheme else repr(raw[:100])
            raise FetchRefused(f"only http:// and https:// URLs can be fetched, not {given}")
        name = _norm_host(split.hostname or "")
        if not name:
            raise FetchRefused("URL has no host")
        port = explicit_port or (443 if scheme == "https" else 80)
        trusted = self.is_trusted(name, port)
        literal = parse_ip_host(name)
        if not trusted:
            if name in METADATA_HOSTS:
                raise FetchRefused(f"refused cloud metadata host {name}")
            if literal is not None:
                why = refusal_reason(literal)
                if why:
                    raise FetchRefused(f"refused {why} address {literal} (host {name})")
        try:
            parsed = httpx.URL(raw)
        except (httpx.InvalidURL, ValueError) as exc:
            raise FetchRefused(f"invalid URL: {exc}") from None
        if literal is not None:
            return Target(parsed, name, port, (str(literal),), trusted)
        try:
            addresses = self._resolve(name, port)
        except (OSError, UnicodeError) as exc:
            raise FetchRefused(f"cannot resolve host {name!r} ({exc})") from None
        if not addresses:
            raise FetchRefused(f"cannot resolve host {name!r}")
        if not trusted:
            for addr in addresses:
                why = refusal_reason(ipaddress.ip_address(addr))
                if why:
                    raise FetchRefused(f"refused {why} address {addr} ({name} resolves to it)")
        return Target(parsed, name, port, tuple(addresses), trusted)


# Formats that are documents rather than pages (HTML and text stay web_fetch's own path).
DOCUMENT_FORMATS = frozenset({"pdf", "docx", "pptx", "odt", "epub"})
VAGUE_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})

DocumentReader = Callable[..., Document]


class DocumentOptions(TypedDict, total=False):
    """How :func:`document_result` reads a document, when not as usual: another reader, and
    who is given the whole document read (the library)."""

    reader: DocumentReader
    seen: Callable[[Document], None] | None


def url_name(url: str) -> str:
    """The file name at the end of a URL's path (``/papers/a%20b.pdf`` -> ``a b.pdf``)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return ""
    return PurePosixPath(unquote(path)).name


def is_document(media_type: str, url: str, head: bytes = b"") -> bool:
    """Whether a response is a document: by its bytes when they are there, else by its
    media type, else (a vague type) by the extension of the URL's path."""
    if head:
        return guess_format(url_name(url), media_type, head) in DOCUMENT_FORMATS
    vague = media_type in VAGUE_TYPES
    return declared_format(url_name(url) if vague else "", media_type) in DOCUMENT_FORMATS


def document_result(
    url: str,
    body: bytes,
    media_type: str,
    question: str,
    budget_chars: int,
    cfg: DocumentsSettings,
    deadline: float,
    cancel: threading.Event | None,
    reader: DocumentReader = read_document,
    seen: Callable[[Document], None] | None = None,
) -> tuple[str, dict[str, Any]]:  # the text, and the data for ToolResult.data
    """The text the model reads of a fetched document and the data kept beside it
    (``seen``: given the whole document read, for the library)."""
    try:
        document = reader(
            body,
            cfg,
            name=url_name(url),
            media_type=media_type,
            deadline=deadline,
            cancel=cancel,
        )
    except DocumentUnreadable as exc:
        if exc.reason == "timeout":
            raise TimeoutError from None  # web_fetch's own "fetch timeout after Ns"
        if exc.reason == "cancelled":
            raise ToolError(f"fetch cancelled: {url}") from None
        raise ToolError(f"fetch error: {exc.message}", fix=exc.fix) from None
    if seen is not None:
        seen(document)
    note = document_note(document, url)
    passages = pick_passages(document, question, max(budget_chars - len(note) - 1, 200))
    shown = sorted({p.page for p in passages})
    body_text = render_passages(passages, document.unit) or _nothing(document)
    data: dict[str, Any] = {  # ToolResult.data: what the model was shown of the document
        "document": {
            "format": document.format,
            "title": document.title,
            "unit": document.unit,
            "pages": document.page_count,
            "pages_shown": shown,
            "no_text_pages": list(document.no_text_pages),
            "ocr_pages": list(document.ocr_pages),
            "notes": list(document.notes),
        },
        "page_links": {str(page): page_link(url, page) for page in shown},
        "chars": document.chars,
        "chars_shown": sum(len(p.text) for p in passages),
        "passages_shown": len(passages),
        "extraction": f"document:{document.format}",
    }
    return f"{note}\n{body_text}", data


def _nothing(document: Document) -> str:
    """What the model reads of a document with no text at all (a scan, OCR off)."""
    return " ".join(["(The document has no text layer.)", *document.notes])


class LibraryKeeper:
    """``web_fetch``'s keeper: which reads to keep, and keeping them."""

    def __init__(self, settings: Settings, library: ReadingLibrary | None = None) -> None:
        self.settings = settings
        self._library = library

    @property
    def library(self) -> ReadingLibrary | None:
        """The process's library over the settings' folder (opened on first use)."""
        if self._library is None and self.settings.system.data_dir is not None:
            self._library = ReadingLibrary.shared(self.settings)
        return self._library

    def wants(self, ctx: ToolContext | None) -> bool:
        library = self.library
        if ctx is None or library is None:
            return False
        mode = library.keep_mode(ctx.session_id)
        return mode == "all" or (mode == "research" and ctx.purpose == "research")

    def keep(self, fetched: Fetched, ctx: ToolContext | None) -> None:
        if ctx is None or self.library is None or not self.wants(ctx):
            return
        if ctx.purpose == "research":
            reader = Reader("research", run_id=ctx.session_id, owner=ctx.owner)
        else:
            reader = Reader(
                "chat", session_id=ctx.session_id, owner=ctx.owner, query_id=ctx.query_id
            )
        self.library.keep(fetched, reader)


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
        read_document: DocumentReader | None = None,
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
            "published": page.get("published"),  # the page's own metadata's date, or None
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
