from ._main import app as app

__all__ = [
    "app",
]
