"""How every HTTP surface (the API, ``/mcp`` on ``local2 serve``, LangGraph Server's auth)
reads a bearer token and says, in its 401, what kind of sign-in this is: one rule, so a
host meets the same challenge wherever it signs in."""

from __future__ import annotations

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
