from ._app import create_api as create_api
from ._app import require_token as require_token
from ._guard import ContentSecurityPolicy as ContentSecurityPolicy
from ._guard import HostRules as HostRules
from ._guard import RequestGuard as RequestGuard
from ._guard import content_security_policy as content_security_policy
from ._identity import StripUntrustedUser as StripUntrustedUser

__all__ = [
    "ContentSecurityPolicy",
    "HostRules",
    "RequestGuard",
    "StripUntrustedUser",
    "content_security_policy",
    "create_api",
    "require_token",
]
