"""What the current turn drew on, beside the chat: its memory hits, its document hits, the
messages the model saw (thinking removed) and its event log."""

from __future__ import annotations

from typing import TYPE_CHECKING

import gradio as gr

from local2.ui import render
from local2.ui.base import reading_table

if TYPE_CHECKING:
    from local2.ui.documents import Attachments


class TurnPanels:
    """The panels of the current turn; the chat, sessions and ratings draw into them."""

    def build(self, documents: Attachments) -> None:
        """Lay out the panels, the document hits (``documents``'s) among them."""
        with gr.Accordion("Memory hits of this turn", open=True):
            self.memory_df = reading_table(
                render.MEMORY_COLUMNS,
                "local2-memory",
                column_widths=[
                    "23%",
                    "24%",
                    "11%",
                    "15%",
                    "15%",
                    "12%",
                ],  # headers fit; CSS: scrolls
            )
        documents.build_hits()
        with gr.Accordion("Messages the model saw (thinking removed)", open=False):
            self.prompt_json = gr.JSON(value=[], elem_id="local2-prompt")
        with gr.Accordion("Event log", open=False):
            self.events_df = reading_table(
                render.EVENT_COLUMNS, "local2-events", column_widths=["14%", "32%", "54%"]
            )
