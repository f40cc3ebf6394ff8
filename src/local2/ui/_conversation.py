"""What shows the conversation in the Chat tab: the chat itself, the approval panel of a paused
turn and the critic's line. The chat, sessions, ratings, grades and the compare actions all
redraw them; this object is given to each."""

from __future__ import annotations

import gradio as gr

from local2.ui._approval import ApprovalPanel


class Conversation:
    """The chat's shared components, each laid out where the Chat tab puts it."""

    def build_chat(self) -> None:
        self.chatbot = gr.Chatbot(
            label="Conversation",
            height="52vh",  # the question box under it stays on the first screen (app.CSS)
            min_height=300,
            elem_id="local2-chat",
            feedback_options=None,
            placeholder="Ask a question. The model's thinking, each tool call and "
            "the critic's grade appear here as they happen.",
            buttons=["copy"],
        )

    def build_approval(self) -> None:
        self.approval = ApprovalPanel()

    def build_critic(self) -> None:
        self.critic_md = gr.Markdown("", elem_id="local2-critic")
