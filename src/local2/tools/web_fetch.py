"""The ``web_fetch`` tool: download one page safely and return its main text.

Fetching is hostile ground, so every hop is vetted by :class:`NetGuard` and the request is
sent to the vetted address (Host header and TLS SNI keep the name); redirects are followed
by hand and re-vetted; the body is streamed with a byte cap; and one deadline covers the
whole fetch (DNS, connects, redirects, a server trickling one byte at a time), which is
why the core is async: ``asyncio.timeout`` bounds it all, where per-read timeouts do not.
"""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
from collections.abc import Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from local2.config.schema import WebFetchSettings
from local2.tools.base import ToolContext, ToolError, ToolResult
from local2.tools.extract import (
    Favor,
    clean_text,
    decode_body,
    extract_main_text,
    truncate_paragraphs,
)
from local2.tools.netguard import NetGuard, Refused, Resolver, Target, system_resolve

T = TypeVar("T")
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {"application/json", "application/ld+json", "application/xml", "application/javascript"}
)
_TEXT_CONTROLS = frozenset({9, 10, 12, 13, 27})
EMPTY_TEXT = "(no readable text found on this page)"

# Name resolution blocks; it runs here so the fetch deadline can abandon a hung lookup
# without asyncio.run() waiting for it on exit.
_DNS_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="local2-dns")


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


def _host_header(url: httpx.URL) -> str:
    host = url.host
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{url.port}" if url.port else host


class WebFetch:
    """Callable tool body; ``resolver``, ``transport`` and ``verify`` are injectable for tests."""

    def __init__(
        self,
        cfg: WebFetchSettings,
        resolver: Resolver = system_resolve,
        transport: httpx.AsyncBaseTransport | None = None,
        favor: Favor = "precision",
        verify: ssl.SSLContext | bool = True,
    ):
        self.cfg = cfg
        self._verify = verify
        self.guard = NetGuard(cfg.allow_hosts, resolver)
        self.favor = favor
        self._transport = transport

    def __call__(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        url = args.get("url") if isinstance(args, Mapping) else None
        if not isinstance(url, str) or not url.strip():
            raise ToolError("missing url argument")
        return run_sync(self.fetch(clean_text(url).strip()))

    async def fetch(self, url: str) -> ToolResult:
        """Fetch ``url`` within the deadline and return ``URL: ...\\nExtracted text:\\n...``."""
        timeout = self.cfg.timeout_s
        try:
            async with asyncio.timeout(timeout):
                download = await self._download(url)
        except (TimeoutError, httpx.TimeoutException):
            raise ToolError(f"fetch timeout after {timeout:g}s: {url}") from None
        return self._render(url, download)

    async def _vet(self, url: str) -> Target:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(_DNS_POOL, self.guard.vet, url)
        except Refused as exc:
            raise ToolError(f"fetch error: {exc}") from None

    async def _open(self, client: httpx.AsyncClient, target: Target) -> httpx.Response:
        """Send the request to each vetted address in turn until one connects."""
        headers = {"Host": _host_header(target.url)}
        extensions: dict[str, Any] = {}
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

    async def _download(self, url: str) -> Download:
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
                    return await self._read(response, str(target.url), redirects)
                finally:
                    await response.aclose()

    async def _read(self, response: httpx.Response, url: str, redirects: list[str]) -> Download:
        content_type = response.headers.get("content-type", "")
        media = content_type.split(";", 1)[0].strip().lower()
        if media and _kind(media, b"") in ("pdf", "binary"):
            raise ToolError(_unsupported(media))
        charset = response.charset_encoding
        body = bytearray()
        truncated = False
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) >= self.cfg.max_bytes:
                    truncated = True
                    del body[self.cfg.max_bytes :]
                    break
        except httpx.DecodingError as exc:
            raise ToolError(f"fetch error: cannot decode the response ({exc})") from None
        except httpx.TransportError as exc:
            if isinstance(exc, httpx.TimeoutException):
                raise
            raise ToolError(f"fetch error: {type(exc).__name__}: {exc}") from None
        return Download(
            url, response.status_code, media, charset, bytes(body), truncated, redirects
        )

    def _render(self, requested: str, dl: Download) -> ToolResult:
        kind = _kind(dl.content_type, dl.body[:4096])
        if kind in ("pdf", "binary"):
            raise ToolError(_unsupported(dl.content_type or "unknown", kind))
        decoded = decode_body(dl.body, dl.charset, kind == "html")
        raw = extract_main_text(decoded, dl.url, self.favor) if kind == "html" else decoded
        text = clean_text(raw).strip()
        shown = truncate_paragraphs(text, self.cfg.max_chars) if text else EMPTY_TEXT
        data = {
            "url": requested,
            "final_url": dl.url,
            "redirects": dl.redirects,
            "status": dl.status,
            "content_type": dl.content_type,
            "bytes": len(dl.body),
            "truncated_bytes": dl.truncated,
            "chars": len(text),
            "truncated_chars": len(shown) < len(text),
        }
        return ToolResult(text=f"URL: {dl.url}\nExtracted text:\n{shown}", data=data)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _unsupported(media: str, kind: str | None = None) -> str:
    if kind == "pdf" or media == "application/pdf":
        return f"fetch error: PDF documents are not supported ({media}); only web pages and text"
    return f"fetch error: unsupported content type {media} (binary); only web pages and text"
