"""http."""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.http.app import create_api as create_api
    from local2.http.app import require_token as require_token
    from local2.http.errors import invalid_fields as invalid_fields
    from local2.http.errors import problem as problem
    from local2.http.errors import status_of as status_of
    from local2.http.guard import ContentSecurityPolicy as ContentSecurityPolicy
    from local2.http.guard import HostRules as HostRules
    from local2.http.guard import RequestGuard as RequestGuard
    from local2.http.guard import content_security_policy as content_security_policy
    from local2.http.guard import is_loopback as is_loopback
    from local2.http.guard import split_host as split_host
    from local2.http.identity import StripUntrustedUser as StripUntrustedUser
else:
    __getattr__ = lazy_face(__name__, __file__)
