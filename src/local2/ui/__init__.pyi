from ._app import build_ui as build_ui
from ._server import require_allowed_hosts as require_allowed_hosts
from ._server import serve as serve

__all__ = [
    "build_ui",
    "require_allowed_hosts",
    "serve",
]
