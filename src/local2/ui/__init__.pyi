from ._app import build_ui as build_ui
from ._mount import mount_ui as mount_ui

__all__ = [
    "build_ui",
    "mount_ui",
]
