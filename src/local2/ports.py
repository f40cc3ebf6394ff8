"""Network basics: a free loopback port, for a server LoCAL2 starts itself (story runs, the
test kit), and the one TLS context every HTTP client LoCAL2 makes verifies with."""

from __future__ import annotations

import functools
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
