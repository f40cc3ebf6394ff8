"""http."""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "Guard": "local2.http.identity",
    "identify": "local2.http.identity",
    "ContentSecurityPolicy": "local2.http.guard",
    "HostRules": "local2.http.guard",
    "Identify": "local2.http.identity",
    "RequestGuard": "local2.http.guard",
    "StripUntrustedUser": "local2.http.identity",
    "UNAUTHORISED": "local2.http.identity",
    "content_security_policy": "local2.http.guard",
    "create_api": "local2.http.app",
    "is_loopback": "local2.http.guard",
    "networks": "local2.http.identity",
    "problem": "local2.http.errors",  # the API's {error, fix}, as the MCP server says it
    "status_of": "local2.http.errors",
    "require_token": "local2.http.app",
    "split_host": "local2.http.guard",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "UNAUTHORISED",
    "ContentSecurityPolicy",
    "Guard",
    "HostRules",
    "Identify",
    "RequestGuard",
    "StripUntrustedUser",
    "content_security_policy",
    "create_api",
    "identify",
    "is_loopback",
    "networks",
    "problem",
    "require_token",
    "split_host",
    "status_of",
]
