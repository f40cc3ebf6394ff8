"""Approve, Deny and Stop in the chat: a paused turn goes on with the person's decision, and a
running one can be stopped before its answer.

The panel itself (what waits, and why) is :mod:`local2.ui.approval`; the turn then streams
into the same chat message as before it paused (:meth:`local2.ui.chat.Chat.follow`). Only the
session's owner may decide or stop (:meth:`local2.service.access.Access.write_session`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradio as gr

from local2.errors import Local2Error
from local2.service import Agent
from local2.ui import render
from local2.ui.approval import ApprovalPanel, Paused
from local2.ui.base import UIPart
from local2.ui.chat import Chat
from local2.ui.session_state import SessionState
from local2.ui.updates import Updates


class ApprovalActions(UIPart):
    """The app's answers to a paused or running turn: Approve and Deny go on with it
    through ``chat``, Stop ends it."""

    def __init__(self, agent: Agent, state: SessionState, chat: Chat) -> None:
        super().__init__(agent)
        self.state = state
        self.chat = chat
        self.banner = chat.banner

    @property
    def approval(self) -> ApprovalPanel:
        """The panel (laid out with the chat, after this part is made)."""
        return self.chat.conversation.approval

    def wire(self) -> None:
        state, outputs = self.state, self.chat.outputs()
        decision_inputs = [
            state.session_id,
            self.approval.pending,
            state.query_ids,
            state.my_sessions,
        ]
        for button, approved, name in (
            (self.approval.approve, True, "approve"),
            (self.approval.deny, False, "deny"),
        ):
            button.click(
                self._decider(approved),
                decision_inputs,
                outputs,
                api_name=name,
                concurrency_limit=self.settings.concurrency_limit,
            )
        stop = self.chat.stop_btn
        stop.click(self.stop_turn, [state.session_id], [stop, self.banner], queue=False)

    def _decider(self, approved: bool) -> Any:
        """The handler of Approve (``approved``) or of Deny."""

        def decide(
            session_id: str | None,
            pending: Any,
            ids: Any,
            mine: Any,
            request: gr.Request | None = None,
        ) -> Iterator[Updates]:
            yield from self._decide(approved, session_id, pending, ids, mine, request)

        return decide

    def _decide(
        self,
        approved: bool,
        session_id: str | None,
        pending: Paused | None,  # what the panel's gr.State holds of the paused turn
        ids: dict[int, str] | None,
        mine: list[dict[str, Any]] | None,  # this browser's sessions, as its BrowserState
        request: gr.Request | None,
    ) -> Iterator[Updates]:
        """Continue the paused turn with the person's decision, in the same chat message."""
        if not session_id or not pending:
            yield {
                **self.approval.hide(),
                self.banner: gr.update(
                    value=render.banner("Nothing is waiting for approval.", kind="info"),
                    visible=True,
                ),
            }
            return
        try:
            person = self.person(request)
            self.agent.access.write_session(person, session_id)
        except Local2Error as exc:
            yield {**self.approval.hide(), self.banner: self.notice(exc)}
            return
        yield self.approval.hide()
        view, chat, user = pending["view"], list(pending["chat"]), pending["user"]
        items = self.agent.approvals.resume(session_id, approved)
        yield from self.chat.follow(
            items, view, chat, dict(ids or {}), user, session_id, mine, person
        )

    def stop_turn(self, session_id: str | None, request: gr.Request | None = None) -> Updates:
        """Stop this tab's running turn; the streaming handler then shows what was cut off."""
        stop = self.chat.stop_btn
        try:
            if session_id:
                self.agent.access.write_session(self.person(request), session_id)
        except Local2Error as exc:
            return {stop: gr.update(interactive=False), self.banner: self.notice(exc)}
        if session_id and self.agent.turns.stop(session_id):
            return {stop: gr.update(value="Stopping…", interactive=False)}
        return {
            stop: gr.update(interactive=False),
            self.banner: self.notice("Nothing to stop: the answer is already out."),
        }
