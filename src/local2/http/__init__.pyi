from .app import create_api as create_api
from .app import require_token as require_token
from .errors import invalid_fields as invalid_fields
from .errors import problem as problem
from .errors import status_of as status_of
from .guard import ContentSecurityPolicy as ContentSecurityPolicy
from .guard import HostRules as HostRules
from .guard import RequestGuard as RequestGuard
from .guard import content_security_policy as content_security_policy
from .guard import is_loopback as is_loopback
from .guard import split_host as split_host
from .identity import StripUntrustedUser as StripUntrustedUser

__all__ = [
    "ContentSecurityPolicy",
    "HostRules",
    "RequestGuard",
    "StripUntrustedUser",
    "content_security_policy",
    "create_api",
    "invalid_fields",
    "is_loopback",
    "problem",
    "require_token",
    "split_host",
    "status_of",
]
