from ._app import create_api as create_api
from ._app import require_token as require_token
from ._errors import invalid_fields as invalid_fields
from ._errors import problem as problem
from ._errors import status_of as status_of
from ._guard import ContentSecurityPolicy as ContentSecurityPolicy
from ._guard import HostRules as HostRules
from ._guard import RequestGuard as RequestGuard
from ._guard import content_security_policy as content_security_policy
from ._guard import is_loopback as is_loopback
from ._guard import split_host as split_host
from ._identity import StripUntrustedUser as StripUntrustedUser

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
