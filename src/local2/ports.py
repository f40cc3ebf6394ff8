"""Network basics, read once for every surface: a free loopback port for a server LoCAL2
starts itself (story runs, the test kit), whether a host stays on this machine, a ``Host``
value's name and port (the server's Host check, the app's image hosts), and the one TLS
context every HTTP client LoCAL2 makes verifies with."""

from __future__ import annotations

import functools
import ipaddress
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@functools.cache
def tls_context(trust_env: bool = True) -> ssl.SSLContext:
    """The TLS context an HTTP client verifies servers with: httpx's own default (certifi's
    roots; with ``trust_env``, ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set), made once per
    process. Each ``httpx.Client`` otherwise builds its own, loading the ~150 root
    certificates again: about 25 ms of CPU a client, and ChatOllama makes two per model.
    An ``SSLContext`` is safe to share between clients, threads and event loops."""
    import httpx  # the clients' library, loaded with the first client

    return httpx.create_ssl_context(trust_env=trust_env)


def is_loopback(host: str) -> bool:
    """Whether a bind address or host name stays on this machine."""
    name = host.strip("[]").lower()
    if name in ("localhost", "") or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is 127.0.0.1
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def split_host(value: str) -> tuple[str, int | None]:
    """``"Example.COM:80"`` -> ``("example.com", 80)``; IPv6 keeps no brackets."""
    value = value.strip()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        name, _, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
    try:
        number = int(port) if port else None
    except ValueError:
        return "", None  # not a host at all: never allowed
    return name.lower().rstrip("."), number
