"""The Gradio web app and the server that hosts it with the HTTP API."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from local2.faces import lazy_face

# Gradio reports usage to its makers unless told not to; LoCAL2 talks only to hosts you set.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

if TYPE_CHECKING:
    from local2.ui.app import build_ui as build_ui
    from local2.ui.server import require_allowed_hosts as require_allowed_hosts
    from local2.ui.server import serve as serve
else:
    __getattr__ = lazy_face(__name__, __file__)
