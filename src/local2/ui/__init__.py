"""The Gradio web app and the server that hosts it with the HTTP API.

Its face (``__init__.pyi``) is loaded on first use (``lazy_loader``): Gradio is imported by
what needs it, not by ``import local2.ui``.
"""

import os

import lazy_loader as lazy

# Gradio reports usage to its makers unless told not to; LoCAL2 talks only to hosts you set.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)
