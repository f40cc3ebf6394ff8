from .app import build_ui as build_ui
from .server import require_allowed_hosts as require_allowed_hosts
from .server import serve as serve

__all__ = [
    "build_ui",
    "require_allowed_hosts",
    "serve",
]
