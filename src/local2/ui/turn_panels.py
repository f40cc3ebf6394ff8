"""What the current turn drew on, beside the chat: its memory hits, its document hits, the
messages the model saw (thinking removed) and its event log."""

from __future__ import annotations

import gradio as gr

from local2.ui import render
from local2.ui.base import UIPart, table


class TurnPanels(UIPart):
    """The panels of the current turn, filled by :class:`local2.ui.chat.Chat`'s handlers."""

    def _turn_panels(self) -> None:
        with gr.Accordion("Memory hits of this turn", open=True):
            self.memory_df = gr.Dataframe(
                value=table(render.MEMORY_COLUMNS, []),
                interactive=False,
                wrap=True,
                column_widths=["240px", "120px", "80px", "90px", "130px", "90px"],
                elem_id="local2-memory",
            )
        self._document_hits_panel()  # local2.ui.documents
        with gr.Accordion("Messages the model saw (thinking removed)", open=False):
            self.prompt_json = gr.JSON(value=[], elem_id="local2-prompt")
        with gr.Accordion("Event log", open=False):
            self.events_df = gr.Dataframe(
                value=table(render.EVENT_COLUMNS, []),
                interactive=False,
                wrap=True,
                column_widths=["70px", "200px", "380px"],
                elem_id="local2-events",
            )
