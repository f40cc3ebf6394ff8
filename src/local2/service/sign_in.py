"""Who a request is for, by one rule for every surface (the API, the app's sign-in, ``/mcp``
on ``local2 serve``, LangGraph Server's auth): a person's bearer token, a trusted proxy's
header, or local; and how a 401 says what kind of sign-in this is, so a host meets the same
challenge wherever it signs in. The surfaces adapt it to their framework (the API's
dependency: :mod:`local2.http._identity`); none of them holds a rule of its own.

- With nobody configured (``local2 users`` never used), everything is as it always was:
  every request is :data:`~local2.contracts.people.LOCAL`'s; on loopback nothing is asked,
  beyond it the single ``LOCAL2_API_TOKEN`` is needed.
- With people configured, every request must say who it is: ``Authorization: Bearer
  <token>`` (one of theirs), or, from an address in ``server.trusted_proxies``, the header
  named by ``server.trusted_user_header`` (e.g. ``X-Forwarded-User`` from oauth2-proxy).
  From any other address that header is removed before anything reads it (the API's
  ``StripUntrustedUser``, by :func:`trusted`), so no one can claim a name by sending it
  themselves. Anything else is 401.
- The single token, when set, always means local, whatever the bind; a token that is
  nobody's is 401 everywhere.
- Whether a request that brings no credential is local's is decided per request, and never
  widens while serving (:class:`Guard`): once a credential was needed (bound beyond
  loopback, or anyone configured), it stays needed when the people list empties, and such
  a request gets 401 saying how to let someone in.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

from local2.contracts import LOCAL, Person
from local2.errors import InvalidInput
from local2.service.access import Access
from local2.storage import check_name

REALM = "LoCAL2"
STATIC_TOKEN = (
    "This server takes a static bearer token, not an OAuth sign-in: send Authorization: "
    "Bearer <token> (local2 users add NAME prints a person's token)"
)


def bearer(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header, its scheme in any case (RFC
    7235: ``bearer``, ``BEARER``); "" for none. A header of another form is returned whole:
    a credential nobody holds, never none at all."""
    if not authorization or not authorization.strip():
        return ""
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return authorization.strip()


def challenge(authorization: str | None) -> str:
    """The 401's ``WWW-Authenticate``: RFC 6750's Bearer challenge with a realm, and in its
    description that the token is a static one, since a host reading a bare ``Bearer``
    starts an OAuth sign-in this server does not offer (the MCP Inspector does). The
    description goes with a request that brought no token too, where RFC 6750 would rather
    have none: that is the request a host first sends."""
    said = f'Bearer realm="{REALM}", '
    if bearer(authorization):
        said += 'error="invalid_token", '
    return said + f'error_description="{STATIC_TOKEN}"'


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
UNAUTHORISED = "missing or wrong bearer token"
NO_ONE = (
    "This LoCAL2 server needs a credential and has none it would accept: nobody is added "
    "here and LOCAL2_API_TOKEN is not set."
)
NO_ONE_FIX = (
    "Add a person (local2 users add NAME) and send their token as 'Authorization: Bearer "
    "<token>', or set LOCAL2_API_TOKEN and restart the server."
)


def networks(addresses: Iterable[str]) -> tuple[Network, ...]:
    """``server.trusted_proxies`` as networks: ``127.0.0.1``, ``10.0.0.0/8``, ``::1``."""
    return tuple(ipaddress.ip_network(a.strip(), strict=False) for a in addresses if a.strip())


def trusted(client: str | None, proxies: tuple[Network, ...]) -> bool:
    if not client or not proxies:
        return False
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return any((mapped or address) in net for net in proxies)


@dataclass(eq=False)
class Guard:
    """Whether a request that brings no credential is local's: only on a server that no one
    beyond this machine reaches (bound to loopback) and that has had nobody configured since
    it started. Asked per request; once the answer is no it stays no while the server runs,
    so removing the last person never opens a server that was closed."""

    loopback: bool = True
    people_seen: bool = False  # anyone configured at start, or at any request since

    def anonymous_is_local(self, configured: bool) -> bool:
        """``configured``: whether anyone is configured now."""
        if configured:
            self.saw_people()
        return self.loopback and not self.people_seen

    def saw_people(self) -> None:
        self.people_seen = True


@dataclass(frozen=True)
class Identify:
    """Who sent a request, from its headers and address (:meth:`person`), by the rule above;
    the API's routes, the app's sign-in, ``/mcp`` and LangGraph Server's auth all ask it."""

    access: Access
    token: str | None = None  # LOCAL2_API_TOKEN, whatever the bind (None: not set)
    user_header: str | None = None  # server.trusted_user_header
    proxies: tuple[Network, ...] = ()
    guard: Guard = field(default_factory=Guard)

    def person(self, authorization: str, proxied: str | None, client: str | None) -> Person | None:
        """Who sent a request with these headers from ``client``, or None (401)."""
        if proxied and trusted(client, self.proxies):
            return self._proxied(proxied.strip())
        given = bearer(authorization)
        if given:
            return self._holder(given)
        return LOCAL if self.guard.anonymous_is_local(self.access.configured()) else None

    def _holder(self, given: str) -> Person | None:
        """Whose token ``given`` is: local's (the single token), a person's, or no one's."""
        if self.token and hmac.compare_digest(given.encode(), self.token.encode()):
            return LOCAL
        found = self.access.token_holder(given)
        if found is not None:
            self.guard.saw_people()  # people are here: never open to anonymous requests again
        return found

    def refusal(self) -> str | dict[str, str]:
        """The 401's ``detail``: with no credential anyone could bring (nobody configured, no
        single token), what to do about it; else that the token is missing or wrong."""
        if self.token is None and not self.access.configured():
            return {"error": NO_ONE, "fix": NO_ONE_FIX}
        return UNAUTHORISED

    def _proxied(self, name: str) -> Person | None:
        """The proxy vouches for the name; whether they are an admin is ours to say. A name
        that cannot be a person's (``local``, ``team``, or outside the naming rule) is no
        one's: a proxy must not hand out this machine's own person or the team's memory."""
        name = name.lower()
        try:
            check_name(name)
        except InvalidInput:
            return None
        return self.access.named(name) or Person(name)


def identify(access: Access, token: str | None, server: object, loopback: bool = True) -> Identify:
    """The :class:`Identify` dependency for these settings (``server``: ``settings.server``;
    ``loopback``: whether the server is bound to loopback only)."""
    header = getattr(server, "trusted_user_header", None) or None
    guard = Guard(loopback, people_seen=access.configured())
    return Identify(access, token, header, networks(getattr(server, "trusted_proxies", [])), guard)
