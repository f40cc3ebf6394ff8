"""The chat tab: a question streams into thinking, tool calls, the answer and the grade."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import gradio as gr

from local2.agent import InvalidQuery, UnknownTurn, new_session_id
from local2.models.errors import ModelError
from local2.ui import render
from local2.ui.base import UIPart, table
from local2.ui.ratings import RATINGS

STREAM_INTERVAL_S = 0.05  # at most ~20 chat refreshes a second while tokens stream


class Chat(UIPart):
    """The conversation, the question box and the panels of the current turn."""

    def _chat_tab(self) -> None:
        with gr.Row():
            with gr.Column(scale=3):
                self.chatbot = gr.Chatbot(
                    label="Conversation",
                    height=620,
                    elem_id="local2-chat",
                    feedback_options=RATINGS,
                    placeholder="Ask a question. The model's thinking, each tool call and "
                    "the critic's grade appear here as they happen.",
                    buttons=["copy"],
                )
                with gr.Row():
                    self.question = gr.Textbox(
                        placeholder="Ask something, e.g. What major AI news broke this week?",
                        show_label=False,
                        scale=5,
                        elem_id="local2-question",
                        autofocus=True,
                    )
                    self.send = gr.Button("Send", variant="primary", scale=1, elem_id="local2-send")
                self.critic_md = gr.Markdown("", elem_id="local2-critic")
                self._rating_row()
            with gr.Column(scale=2):
                self._session_panel()
                with gr.Accordion("Memory hits of this turn", open=True):
                    self.memory_df = gr.Dataframe(
                        value=table(render.MEMORY_COLUMNS, []),
                        interactive=False,
                        wrap=True,
                        column_widths=["44%", "12%", "10%", "10%", "12%", "12%"],
                        elem_id="local2-memory",
                    )
                with gr.Accordion("Messages the model saw (thinking removed)", open=False):
                    self.prompt_json = gr.JSON(value=[], elem_id="local2-prompt")
                with gr.Accordion("Event log", open=False):
                    self.events_df = gr.Dataframe(
                        value=table(render.EVENT_COLUMNS, []),
                        interactive=False,
                        wrap=True,
                        column_widths=["12%", "30%", "58%"],
                        elem_id="local2-events",
                    )

    def _wire_chat(self) -> None:
        chat_outputs = [
            self.chatbot,
            self.chat_msgs,
            self.question,
            self.banner,
            self.memory_df,
            self.prompt_json,
            self.events_df,
            self.critic_md,
            self.query_ids,
            self.my_sessions,
            self.session_pick,
            self.reward_md,
        ]
        chat_inputs = [
            self.question,
            self.session_id,
            self.chat_msgs,
            self.query_ids,
            self.my_sessions,
        ]
        for trigger in (self.question.submit, self.send.click):
            trigger(
                self.respond,
                chat_inputs,
                chat_outputs,
                concurrency_limit=self.settings.concurrency_limit,
                show_progress="minimal",
            )

    def respond(
        self,
        question: str,
        session_id: str | None,
        chat: list[Any],
        ids: dict[int, str],
        mine: list[dict[str, Any]] | None,
    ) -> Iterator[dict]:
        """Stream one turn into the chat; errors become a banner, never a traceback."""
        session_id = session_id or new_session_id()
        chat = list(chat or [])
        question = question or ""
        user = gr.ChatMessage(role="user", content=question)
        view = render.TurnView(question)
        try:
            items = self.agent.stream(question, session_id)
            first = next(items)  # the question is validated before anything runs
        except InvalidQuery as exc:
            gr.Warning(str(exc))
            yield {
                self.banner: gr.update(value=render.banner(str(exc), kind="warning"), visible=True),
                self.question: question,
            }
            return
        except ModelError as exc:
            yield self._model_failed(exc, question)
            return
        yield {
            self.chatbot: [*chat, user],
            self.question: "",
            self.banner: gr.update(value="", visible=False),
            self.critic_md: "",
            self.reward_md: "",
        }
        last = 0.0
        try:
            view.apply(*first)
            for kind, data in items:
                view.apply(kind, data)
                now = time.monotonic()
                if kind in ("thinking", "token") and now - last < STREAM_INTERVAL_S:
                    continue
                last = now
                update: dict[Any, Any] = {self.chatbot: [*chat, user, *view.messages(now)]}
                if kind == "event":
                    update[self.events_df] = table(
                        render.EVENT_COLUMNS, render.event_rows(view.events)
                    )
                yield update
        except ModelError as exc:
            view.fail(exc.message)
            yield {
                **self._model_failed(exc, question),
                self.chatbot: [*chat, user, *view.messages()],
            }
            return
        payload = view.payload or {}
        turn_chat = [*chat, user, *view.messages()]
        ids = {**(ids or {}), len(chat): str(payload.get("query_id") or "")}
        mine = self._remember(mine, session_id, question)
        try:
            prompt = self.agent.prompt_messages(session_id)
        except UnknownTurn:
            prompt = []
        yield {
            self.chatbot: turn_chat,
            self.chat_msgs: turn_chat,
            self.query_ids: ids,
            self.my_sessions: mine,
            self.session_pick: gr.update(choices=self._session_choices(mine)),
            self.memory_df: table(
                render.MEMORY_COLUMNS, render.memory_rows(payload.get("memory_hits") or [])
            ),
            self.prompt_json: prompt,
            self.events_df: table(render.EVENT_COLUMNS, render.event_rows(view.events)),
            self.critic_md: render.critique_text(view.critique)
            or ("Critic: off" if self.agent.services.critic is None else ""),
        }

    def _model_failed(self, exc: ModelError, question: str) -> dict:
        """The model could not answer: say what and how to fix it; keep the question."""
        return {
            self.banner: gr.update(value=render.banner(exc.message, exc.fix), visible=True),
            self.question: question,
        }
