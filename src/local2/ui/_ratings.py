"""Ratings in the app: a person's 1-5 for an answer becomes ``user.feedback`` and a reward.

Five labelled buttons under the chat rate the last answer, or the answer the person clicked
in the chat. One click writes one record; the same rating again writes nothing, another one
replaces it, and the note under the buttons says which happened. (Gradio's own feedback
menu on chat messages fires each choice twice and stays open, so it is not used.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gradio as gr

import local2.ui._render as render
import local2.ui._transcript as transcript
from local2.errors import Local2Error
from local2.service import Agent
from local2.ui._base import UIPart, table
from local2.ui._conversation import Conversation
from local2.ui._safe_markdown import neutralise
from local2.ui._session_state import SessionState
from local2.ui._turn_panels import TurnPanels
from local2.ui._updates import Updates

RATING_WORDS = transcript.RATING_WORDS


def _last_answer(ids: dict[int, str]) -> str | None:
    return next((q for _, q in sorted(ids.items(), reverse=True) if q), None)


def rating_said(rating: int, result: Mapping[str, Any], memory_on: bool = True) -> str:
    """What a rating did, in a person's words: recorded (or not), and what memory does
    with it."""
    given = transcript.rating_text(rating)
    if result.get("unchanged"):
        return f"This answer is already rated {given}: nothing new was recorded."
    if result.get("previous"):
        said = f"Changed your rating of this answer from {result['previous']}/5 to **{given}**."
    else:
        said = f"Recorded your rating **{given}** for this answer."
    annotated = result.get("engrams_annotated")
    if annotated is None:  # memory is not open here: the rating waits for it
        return f"{said} Memory will take it into account the next time it is opened."
    if not annotated:
        if not memory_on:
            return f"{said} Memory is off, so only the rating is kept."
        return f"{said} Memory gives it to this answer if it keeps the answer."
    return (
        f"{said} Memory keeps it with this answer: later questions lean on well-rated "
        "answers and leave out poorly rated ones."
    )


class Ratings(UIPart):
    """The rating buttons, which answer they rate, and what was recorded; a rating is shown
    on its answer in the chat (``conversation``) and in the turn's event log (``panels``)."""

    def __init__(
        self,
        agent: Agent,
        state: SessionState,
        banner: gr.Markdown,
        conversation: Conversation,
        panels: TurnPanels,
    ) -> None:
        super().__init__(agent)
        self.state = state
        self.banner = banner
        self.conversation = conversation
        self.panels = panels

    def build(self) -> None:
        self.rate_target = gr.State(None)  # query id of the answer picked; None: the last
        with gr.Group(elem_id="local2-rating"):
            self.rate_label = gr.Markdown(
                "Rate an answer once there is one.", elem_id="local2-rate-label"
            )
            with gr.Row(elem_id="local2-rate-buttons"):
                self.rate_buttons = [
                    gr.Button(
                        f"{n} · {word}",
                        size="sm",
                        min_width=60,
                        interactive=False,
                        elem_id=f"local2-rate-{n}",
                    )
                    for n, word in RATING_WORDS.items()
                ]
        self.reward_md = gr.Markdown("", elem_id="local2-reward")

    def outputs(self) -> list[Any]:
        return [self.rate_target, self.rate_label, self.reward_md, *self.rate_buttons]

    def enabled(self, enabled: bool) -> Updates:
        return {button: gr.update(interactive=enabled) for button in self.rate_buttons}

    def target(self, query_id: str | None, question: str | None, enabled: bool) -> Updates:
        """Outputs naming the answer the buttons rate (``query_id`` None: the last one)."""
        if question:
            which = "the last answer" if query_id is None else "the answer"
            label = (
                f"**Rate {which}** to “{neutralise(render.short(question, 80))}” "
                "(or click another answer in the chat to rate that one):"
            )
        else:
            label = "Rate an answer once there is one."
        return {
            self.rate_target: query_id,
            self.rate_label: label,
            self.reward_md: "",
            **self.enabled(enabled),
        }

    def wire(self) -> None:
        state, chatbot = self.state, self.conversation.chatbot
        inputs = [state.session_id, self.rate_target, state.query_ids, state.chat_msgs]
        outputs = [
            self.reward_md,
            self.panels.events_df,
            self.banner,
            chatbot,
            state.chat_msgs,
            state.query_ids,
        ]
        for rating, button in zip(RATING_WORDS, self.rate_buttons, strict=True):
            button.click(self._rater(rating), inputs, outputs)
        chatbot.select(
            self.pick_answer,
            [state.session_id, state.query_ids],
            [*self.outputs(), self.panels.memory_df, self.panels.events_df, self.banner],
        )

    def _rater(self, rating: int) -> Callable[..., Updates]:
        def rate(
            session_id: str | None,
            target: str | None,
            ids: dict[int, str],
            chat: list[Any],
            request: gr.Request | None = None,
        ) -> Updates:
            return self.rate(rating, session_id, target, ids, chat, request)

        return rate

    def _warn(self, message: str, kind: str = "warning") -> Updates:
        return {self.banner: gr.update(value=render.banner(message, kind=kind), visible=True)}

    def rate(
        self,
        rating: int,
        session_id: str | None,
        target: str | None,
        ids: dict[int, str] | None,
        chat: list[Any] | None,
        request: gr.Request | None = None,
    ) -> Updates:
        """Record one rating for the picked (or last) answer and show it on that answer
        (only the session's owner rates its answers)."""
        ids = dict(ids or {})
        query_id = target or _last_answer(ids)
        if not session_id or not query_id:
            return self._warn("There is no answer to rate yet.", kind="info")
        try:
            self.agent.access.write_session(self.person(request), session_id)
            result = self.agent.ratings.feedback(session_id, query_id, rating)
        except Local2Error as exc:
            return {self.banner: self.notice(exc)}
        said = rating_said(rating, result, self.agent.info.memory)
        state = self.agent.sessions.state(session_id)
        shown, ids = transcript.with_rating(list(chat or []), ids, query_id, rating)
        return {
            self.reward_md: said,
            self.panels.events_df: table(
                render.EVENT_COLUMNS, render.event_rows(state.get("event_log") or [])
            ),
            self.banner: gr.update(value="", visible=False),
            self.conversation.chatbot: shown,
            self.state.chat_msgs: shown,
            self.state.query_ids: ids,
        }

    def pick_answer(
        self,
        session_id: str | None,
        ids: dict[int, str] | None,
        selected: gr.SelectData,
        request: gr.Request | None = None,
    ) -> Updates:
        """Clicking a message in the chat picks its turn: the buttons rate that answer, and
        the side panels show that turn's memory hits and events."""
        index = selected.index[0] if isinstance(selected.index, list | tuple) else selected.index
        query_id = transcript.turn_at(dict(ids or {}), int(index))
        try:
            if session_id:
                self.agent.access.read_session(self.person(request), session_id)
        except Local2Error as exc:
            return {self.banner: self.notice(exc)}
        turn = self.agent.sessions.turn(session_id, query_id) if session_id and query_id else None
        if turn is None:
            return {
                self.rate_label: "That turn was stopped before its answer, so there is nothing "
                "to rate.",
                **self.enabled(False),
            }
        record = turn.get("record") or {}
        return {
            **self.target(query_id, turn["user"], enabled=True),
            self.panels.memory_df: table(
                render.MEMORY_COLUMNS, render.memory_rows(record.get("memory_hits") or [])
            ),
            self.panels.events_df: table(
                render.EVENT_COLUMNS, render.event_rows(record.get("event_log") or [])
            ),
        }
