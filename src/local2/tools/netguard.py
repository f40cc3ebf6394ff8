"""SSRF guard: decide whether a URL may be fetched, and which address to connect to.

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
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from local2.errors import FetchRefused

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
