"""The Gradio web app and the server that hosts it with the HTTP API."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from local2.faces import lazy_face

# Gradio reports usage to its makers unless told not to; LoCAL2 talks only to hosts you set.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

if TYPE_CHECKING:
    import gradio as gr

    from local2.service.agent import Agent

__all__ = [
    "build_ui",
    "require_allowed_hosts",
    "serve",
]


def build_ui(agent: Agent) -> gr.Blocks:
    from local2.ui.app import build_ui as build

    return build(agent)


def serve(agent: Agent, host: str = "127.0.0.1", port: int = 7860, ui: bool = True) -> Any:
    from local2.ui.server import serve as run

    return run(agent, host, port, ui=ui)


# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "require_allowed_hosts": "local2.ui.server",
}
__getattr__ = lazy_face(__name__, _FACE)
