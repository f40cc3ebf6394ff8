"""Acting on a compared or retried turn (:mod:`local2.ui._compare` shows them): prefer one
answer of a pair, show the other attempt, or try again with the critic's feedback.

A preference or an attempt shown redraws the session (:class:`~local2.ui._sessions.Sessions`),
since the conversation now continues from the choice; the retry streams into the chat like a
turn (:meth:`local2.ui._chat.Chat.follow`). Only the session's owner may do any of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradio as gr

import local2.ui._render as render
from local2.errors import Local2Error
from local2.graph import turn_payload
from local2.service import Agent
from local2.ui._base import UIPart
from local2.ui._chat import Chat
from local2.ui._compare import PREFER_LABELS, ComparePanel
from local2.ui._ratings import Ratings
from local2.ui._safe_markdown import neutralise
from local2.ui._session_panel import SessionPanel
from local2.ui._session_state import SessionState
from local2.ui._sessions import Sessions
from local2.ui._updates import Updates


class CompareActions(UIPart):
    """Preferring one of a pair, showing the other attempt, and the retry: each redraws the
    chat (a preference or attempt through ``sessions``, the retry streaming through ``chat``)."""

    def __init__(
        self,
        agent: Agent,
        state: SessionState,
        panel: ComparePanel,
        chat: Chat,
        sessions: Sessions,
        session_panel: SessionPanel,
        ratings: Ratings,
    ) -> None:
        super().__init__(agent)
        self.state = state
        self.panel = panel
        self.chat = chat
        self.banner = chat.banner
        self.sessions = sessions
        self.session_panel = session_panel
        self.ratings = ratings

    def wire(self) -> None:
        panel, state = self.panel, self.state
        after = [*self.sessions.outputs(), *panel.outputs()]
        for choice, button in panel.prefer_buttons.items():
            button.click(self._preferrer(choice), [state.session_id, panel.pair_target], after)
        for n, button in panel.show_buttons.items():
            button.click(self._shower(n), [state.session_id, panel.retry_target], after)
        panel.retry_btn.click(
            self.retry_turn,
            [
                state.session_id,
                panel.retry_target,
                state.chat_msgs,
                state.query_ids,
                state.my_sessions,
            ],
            self.chat.outputs(),
            concurrency_limit=self.settings.concurrency_limit,
        )
        for button in (self.session_panel.new_session, self.session_panel.resume):
            button.click(panel.compare_hidden, None, [panel.pair_box, panel.retry_box])

    def _preferrer(self, choice: str) -> Any:
        def prefer(
            session_id: str | None, query_id: str | None, request: gr.Request | None = None
        ) -> Updates:
            return self.prefer(choice, session_id, query_id, request)

        return prefer

    def _shower(self, attempt: int) -> Any:
        def show(
            session_id: str | None, query_id: str | None, request: gr.Request | None = None
        ) -> Updates:
            return self.show_attempt(attempt, session_id, query_id, request)

        return show

    def _redrawn(self, session_id: str, note: str) -> Updates:
        """The chat redrawn from the session's history (it continues from the choice)."""
        return {
            **self.sessions.session_view(session_id),
            self.ratings.reward_md: note,
        }

    def prefer(
        self,
        choice: str,
        session_id: str | None,
        query_id: str | None,
        request: gr.Request | None = None,
    ) -> Updates:
        if not session_id or not query_id:
            return {self.banner: self.notice("There is no compared answer to prefer.")}
        try:
            self.agent.access.write_session(self.person(request), session_id)
            result = self.agent.ratings.prefer(session_id, query_id, choice)
        except Local2Error as exc:
            return {self.banner: self.notice(exc)}
        payload = self.agent.sessions.state(session_id)

        note = (
            f"Recorded: **{PREFER_LABELS[choice]}**. The conversation continues from "
            f"**{(result['continues'] or '').upper()}**; your vote counts in the Arena."
            if result["continues_history"]
            else f"Recorded: **{PREFER_LABELS[choice]}**. {result['note']}"
        )
        view = turn_payload(payload)
        return {
            **self._redrawn(session_id, note),
            **(self.panel.pair_view(view) if view.get("respondents") else {}),
        }

    def show_attempt(
        self,
        attempt: int,
        session_id: str | None,
        query_id: str | None,
        request: gr.Request | None = None,
    ) -> Updates:
        if not session_id or not query_id:
            return {self.banner: self.notice("There are no attempts to switch between.")}
        try:
            self.agent.access.write_session(self.person(request), session_id)
            self.agent.retries.show(session_id, query_id, attempt)
        except Local2Error as exc:
            return {self.banner: self.notice(exc)}

        view = turn_payload(self.agent.sessions.state(session_id))
        return {
            **self._redrawn(session_id, f"The conversation continues from attempt {attempt}."),
            **self.panel.done(view),
        }

    def retry_turn(
        self,
        session_id: str | None,
        query_id: str | None,
        chat: list[Any],
        ids: dict[int, str],
        mine: list[dict[str, Any]] | None,  # this browser's sessions, as its BrowserState
        request: gr.Request | None = None,
    ) -> Iterator[Updates]:
        """Stream the second attempt into the chat like a turn (the owner's only)."""
        if not session_id or not query_id:
            yield {self.banner: self.notice("There is no answer to try again.")}
            return
        try:
            person = self.person(request)
            self.agent.access.write_session(person, session_id)
            question, _ = self.agent.retries.retry_request(session_id, query_id)
        except Local2Error as exc:
            yield {self.banner: self.notice(exc)}
            return
        user = gr.ChatMessage(
            role="user", content=f"{neutralise(question)}\n\n_(again, with the critic's feedback)_"
        )
        view = render.TurnView(question)
        items = self.agent.retries.retry(session_id, query_id, person=person)
        chat, ids = list(chat or []), dict(ids or {})
        yield {self.panel.retry_btn: gr.update(interactive=False)}
        yield from self.chat.follow(items, view, chat, ids, user, session_id, mine, person)
