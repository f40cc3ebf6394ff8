"""A failed search in the person's words: what failed, why, and what to do.

A search client's own error is written for its developers: ``ddgs`` offline says
``DNSError: DNSError('error sending request for url (https://www.mojeek.com/search?q=...) >
error resolving DNS > DNS error: no records found for Query { name: Name("www.mojeek.com."),
...``. That text is kept whole for the event log (``detail``); the person and the model read
one plain sentence instead, naming the cause (no network, a refused connection, a timeout,
a rejected key, a rate limit) and carrying the fix that fits it, with no URL of the engine's
own query, no debug text and no Markdown marks in it.

The cause is read from the exception chain the real client raised (its class names and its
text: ``ddgs`` wraps its HTTP client's ``primp.DNSError``, httpx its ``socket.gaierror``),
never from our own guess. ``ToolError.data["cause"]`` names it for the surfaces that choose
a next step by cause (a research run with no sources).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from local2.errors import ToolError

# The causes, as ``ToolError.data["cause"]`` names them.
NO_NETWORK = "no_network"  # no name could be looked up, or no route to any host
REFUSED = "refused"  # something answered the connection and refused it
UNREACHABLE = "unreachable"  # another failure to connect
TIMEOUT = "timeout"
REJECTED_KEY = "rejected_key"  # 401
FORBIDDEN = "forbidden"  # 403
RATE_LIMITED = "rate_limited"  # 429
HTTP_STATUS = "http_status"  # another status
BAD_REPLY = "bad_reply"  # an answer that is not what the API promises
UNAVAILABLE = "unavailable"  # not installed, no key: nothing was asked
# Causes no other query can cure: whatever words a search is given next, it fails the same
# way until the machine, the key or the setting changes (a timeout, a rate limit or a
# server's error may pass, and a reply that could not be read may be the query's).
LASTING = frozenset({NO_NETWORK, REFUSED, REJECTED_KEY, FORBIDDEN, UNAVAILABLE})

DOCTOR = "`local2 doctor` checks the search."
OFFLINE_FIX = (
    "Connect this machine to the network and ask again; offline, use your library "
    '(`local2 research --sources library`, or "My library only" in the Research tab) or set '
    f"`search.provider: corpus` (with a `corpus_path`) in web.yaml. {DOCTOR}"
)
REFUSED_FIX = (
    "Check this machine's network connection and any proxy or firewall, or set another "
    f"provider in web.yaml (`search.provider`: searxng, tavily or brave). {DOCTOR}"
)
TIMEOUT_FIX = (
    "Ask again in a moment; if it keeps timing out, raise `search.timeout_s` or set another "
    f"provider in web.yaml. {DOCTOR}"
)
RATE_FIX = (
    "Wait a few minutes and ask again, or set another provider in web.yaml "
    f"(`search.provider`: searxng, tavily or brave). {DOCTOR}"
)
OTHER_FIX = f"Ask again later, or set another provider in web.yaml (`search.provider`). {DOCTOR}"

# Patterns, compiled on first use (re caches them): loading settings imports this module
# with the search providers', and compiling these cost more than the rest of it.
_DNS = (
    r"DNSError|error resolving DNS|name resolution|Name or service not known|"
    r"nodename nor servname|No address associated|getaddrinfo failed|NameResolutionError|"
    r"Errno -[235]\b"
)
_NO_ROUTE = r"Network is unreachable|No route to host|(?:os error|Errno) (?:101|113)\b"
_REFUSED = r"Connection refused|ConnectionRefused|(?:os error|Errno) 111\b"

MAX_DETAIL = 1000


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, what caused it, and exceptions it carries as arguments (how ``ddgs`` wraps
    the error of the engine that failed last), each once."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [a for a in current.args if isinstance(a, BaseException)]
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]


def detail_of(exc: BaseException) -> str:
    """The client's own account of the failure, for the event log: every exception of the
    chain as ``Class: text``, on one line, bounded."""
    parts = dict.fromkeys(f"{type(e).__name__}: {' '.join(str(e).split())}" for e in _chain(exc))
    text = " | ".join(parts)
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"


def connect_cause(exc: BaseException) -> str:
    """Why a connection failed: :data:`NO_NETWORK`, :data:`REFUSED` or :data:`UNREACHABLE`."""
    said = _said(exc)
    if re.search(_DNS, said, re.I) or re.search(_NO_ROUTE, said, re.I):
        return NO_NETWORK
    if re.search(_REFUSED, said, re.I):
        return REFUSED
    return UNREACHABLE


def _said(exc: BaseException) -> str:
    return " ".join(f"{type(e).__name__} {e}" for e in _chain(exc))


def _failure(message: str, cause: str, fix: str, detail: str) -> ToolError:
    return ToolError(message, data={"cause": cause, "detail": detail}, fix=fix)


def cannot_connect(who: str, exc: BaseException, *, address_fix: str = "") -> ToolError:
    """A search that never reached ``who`` (``the search engines``, ``SearXNG at URL``), in
    words that name the cause, with its fix. ``address_fix``: ``who`` is at an address the
    person chose, and this is how to correct it (a name that cannot be looked up may be a
    wrong address rather than no network; a refused connection, a server not running)."""
    cause = connect_cause(exc)
    detail = detail_of(exc)
    if cause == NO_NETWORK and address_fix:
        return _failure(
            f"cannot reach {who}: its address could not be looked up (no network, or a wrong "
            "address)",
            cause,
            f"{address_fix} {OFFLINE_FIX}",
            detail,
        )
    if cause == NO_NETWORK:
        how = "has no route to" if re.search(_NO_ROUTE, _said(exc), re.I) else "could not look up"
        return _failure(f"no network: this machine {how} {who}", cause, OFFLINE_FIX, detail)
    if cause == REFUSED:
        said = f"cannot reach {who}: the connection was refused"
        if address_fix:
            return _failure(f"{said} (is it running?)", cause, f"{address_fix} {DOCTOR}", detail)
        return _failure(said, cause, REFUSED_FIX, detail)
    return _failure(f"cannot reach {who}", cause, f"{address_fix} {REFUSED_FIX}".strip(), detail)


def timed_out(seconds: float, detail: str = "") -> ToolError:
    """``search timeout after Ns``, the wording every provider uses."""
    return _failure(f"search timeout after {seconds:g}s", TIMEOUT, TIMEOUT_FIX, detail)


STATUS_CAUSES = {401: REJECTED_KEY, 403: FORBIDDEN, 429: RATE_LIMITED}


def status_failure(status: int, hint: str, fix: str = "", detail: str = "") -> ToolError:
    """``search failed: <status> (<hint>)``, the wording every provider uses, and its fix."""
    cause = STATUS_CAUSES.get(status, HTTP_STATUS)
    if not fix:
        fix = RATE_FIX if cause == RATE_LIMITED else OTHER_FIX
    message = f"search failed: {status} ({hint})" if hint else f"search failed: {status}"
    return _failure(message, cause, fix, detail)


def bad_reply(who: str, why: str, detail: str = "") -> ToolError:
    return _failure(
        f"{who} sent an answer that could not be read ({why})", BAD_REPLY, OTHER_FIX, detail
    )


def unavailable(message: str, fix: str) -> ToolError:
    """Nothing was asked: a package or key is missing (the message says which)."""
    return _failure(message, UNAVAILABLE, f"{fix} {DOCTOR}".strip(), "")


def lasting(causes: list[str]) -> bool:
    """Whether every provider tried failed for a cause no other query can cure
    (:data:`LASTING`): then no search of the web can succeed in this run."""
    return bool(causes) and all(cause in LASTING for cause in causes)


def cause_of(exc: ToolError) -> str:
    """The cause a failed search names (``""`` for a failure from before causes)."""
    cause = exc.data.get("cause")
    return cause if isinstance(cause, str) else ""


def lasting_of(exc: ToolError) -> bool:
    """Whether a failed search says no other query can succeed: every provider it tried
    failed for a lasting cause (``ToolError.data["lasting"]``, set by the provider chain)."""
    return exc.data.get("lasting") is True
