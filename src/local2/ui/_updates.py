"""What an event handler hands Gradio back: each output component's new value or
``gr.update(...)`` (Gradio's own untyped properties), keyed by the component."""

from __future__ import annotations

from typing import Any, TypeAlias

import gradio as gr
from gradio.blocks import Block

Updates: TypeAlias = dict[Block, Any]  # Gradio's shape: a component -> its value or update


def skipped() -> Updates:
    """Gradio's "leave every output as it is" (``gr.skip()``)."""

    nothing: Updates = gr.skip()
    return nothing
