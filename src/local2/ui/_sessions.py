"""Sessions in the app: each browser tab its own, a list of this browser's, new and resume.

The list shows only the signed-in person's sessions (this browser may have been someone
else's before), and a session id pasted that is someone else's is as unknown as one that
never was (:mod:`local2.service.access`). With ``ui.list_all_sessions`` the list adds all of
this person's recent sessions, from any browser.

A tab shows one branch of its session. After a replay or fork the session's current branch
is the new one, but the tab keeps showing (and continuing) the branch the person was on,
says so, and offers to switch: nothing disappears without the person choosing it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr

import local2.ui._render as render
import local2.ui._transcript as transcript
from local2.contracts import HistoryTurn, Person
from local2.errors import InvalidId, Local2Error, NotFound
from local2.ids import check_session_id, new_session_id
from local2.service import Agent
from local2.ui._base import UIPart, table
from local2.ui._conversation import Conversation
from local2.ui._documents import Attachments
from local2.ui._header import Header
from local2.ui._ratings import Ratings
from local2.ui._session_panel import SessionPanel
from local2.ui._session_state import SessionState
from local2.ui._time_travel_tab import TimeTravelTab
from local2.ui._turn_panels import TurnPanels
from local2.ui._updates import Updates

TURNS_SHOWN = 200


class Sessions(UIPart):
    """Showing a session: a new tab's, a new one, one resumed, or the current branch. Every
    panel of the chat is redrawn (given: the conversation, the turn's panels, attachments,
    ratings) and time travel's session box follows."""

    def __init__(
        self,
        agent: Agent,
        state: SessionState,
        header: Header,
        panel: SessionPanel,
        conversation: Conversation,
        panels: TurnPanels,
        documents: Attachments,
        ratings: Ratings,
        time_travel: TimeTravelTab,
    ) -> None:
        super().__init__(agent)
        self.state = state
        self.header = header
        self.banner = header.banner
        self.panel = panel
        self.conversation = conversation
        self.panels = panels
        self.documents = documents
        self.ratings = ratings
        self.time_travel = time_travel

    def outputs(self) -> list[Any]:
        """What :meth:`session_view` draws."""
        state, view, panels = self.state, self.conversation, self.panels
        return [
            state.session_id,
            view.chatbot,
            state.chat_msgs,
            state.query_ids,
            panels.memory_df,
            self.documents.document_df,
            self.documents.attached_md,
            panels.prompt_json,
            panels.events_df,
            view.critic_md,
            self.banner,
            self.time_travel.tt_session,
            *self.panel.branch_outputs(),
            *self.ratings.outputs(),
            *view.approval.outputs,
        ]

    def wire(self, demo: gr.Blocks) -> None:
        panel = self.panel
        demo.load(
            self.on_load,
            [self.state.my_sessions],
            [
                self.state.session_id,
                panel.session_md,
                panel.session_pick,
                self.time_travel.tt_session,
                *self.header.signed_in_outputs,
            ],
        )
        # Focus the question without scrolling: `autofocus` scrolled the title off-screen.
        demo.load(
            None,
            js="() => document.querySelector('#local2-question textarea')"
            "?.focus({preventScroll: true})",
        )
        outputs = self.outputs()
        panel.new_session.click(self.start_new_session, None, outputs)
        panel.resume.click(self.resume_session, [panel.session_pick], outputs)
        panel.switch_branch.click(self.show_current_branch, [self.state.session_id], outputs)

    def on_load(
        self,
        mine: list[dict[str, Any]] | None,  # this browser's sessions, as its BrowserState
        request: gr.Request | None = None,
    ) -> tuple[Any, ...]:
        """A new session for a new tab, the signed-in person's Resume list, and who they are."""
        session_id = new_session_id()
        try:
            person: Person | None = self.person(request)
        except Local2Error:
            person = None  # signed out: nothing of anyone's to list
        choices = self.panel.choices(mine, person) if person is not None else []
        return (
            session_id,
            self.panel.label(session_id),
            gr.update(choices=choices, value=None),
            session_id,
            *self.header.signed_in(person, request),
        )

    def session_view(
        self, session_id: str, branch: str | None = None, person: Person | None = None
    ) -> Updates:
        """Outputs that show one branch of a session: every turn as it was, and the panels
        of its last turn (all reset, so nothing of the previous session stays on screen)."""
        turns: list[HistoryTurn] = []
        state: Mapping[str, Any] = {}
        prompt: list[Any] = []
        if self.agent.sessions.exists(session_id):
            state = self.agent.sessions.state(session_id, branch)
            turns = self.agent.sessions.history(
                session_id, TURNS_SHOWN, checkpoint_id=branch, detail=True
            )
            prompt = self.agent.sessions.prompt_messages(session_id, branch)
        if turns and not turns[-1].get("critique"):
            turns[-1]["critique"] = state.get("critique")  # graded before grades were noted
        chat, ids = transcript.history_messages(turns)
        last: Mapping[str, Any] = turns[-1] if turns else {}
        view, panels, approval = self.conversation, self.panels, self.conversation.approval
        waiting = (
            approval.waiting(self.agent.approvals.pending(session_id), chat)
            if branch is None
            else approval.hide()
        )
        return {
            self.state.session_id: session_id,
            view.chatbot: chat,
            self.state.chat_msgs: chat,
            self.state.query_ids: ids,
            panels.memory_df: table(
                render.MEMORY_COLUMNS, render.memory_rows(state.get("memory_hits") or [])
            ),
            **self.documents.view(session_id, state.get("document_hits") or [], person),
            panels.prompt_json: prompt,
            panels.events_df: table(
                render.EVENT_COLUMNS, render.event_rows(state.get("event_log") or [])
            ),
            view.critic_md: render.critique_text(last.get("critique")),
            self.banner: gr.update(value="", visible=False),
            self.time_travel.tt_session: session_id,
            **self.panel.on_branch(session_id, branch),
            **self.ratings.target(None, last.get("user"), enabled=bool(turns)),
            **waiting,
        }

    def start_new_session(self) -> Updates:
        return self.session_view(new_session_id())

    def resume_session(self, pasted: str | None, request: gr.Request | None = None) -> Updates:
        try:  # the request's one check: the service is handed the id checked
            session_id = check_session_id(pasted.strip()) if pasted and pasted.strip() else ""
        except InvalidId as exc:
            return {
                self.banner: gr.update(
                    value=render.banner(exc.message, kind="warning"), visible=True
                )
            }
        try:
            readable = bool(session_id) and self._readable(request, session_id)
        except Local2Error as exc:  # signed out
            return {self.banner: self.notice(exc)}
        if not readable or not self.agent.sessions.exists(session_id):
            shown = session_id or "(none given)"
            return {
                self.banner: gr.update(
                    value=render.banner(
                        f"No session {shown} here.",
                        "Pick one from the list of recent sessions or paste a full session id.",
                        kind="warning",
                    ),
                    visible=True,
                )
            }
        return self.session_view(session_id, person=self.person(request))

    def _readable(self, request: gr.Request | None, session_id: str) -> bool:
        """Whether the signed-in person may read the session (someone else's: as if unknown;
        an admin's read of it is noted)."""
        try:
            self.agent.access.read_session(self.person(request), session_id)
        except NotFound:
            return False
        return True

    def show_current_branch(
        self, session_id: str | None, request: gr.Request | None = None
    ) -> Updates:
        """Switch this tab to the session's current branch (after a replay or fork)."""
        if not session_id:
            return {}
        try:
            person = self.person(request)
            self.agent.access.read_session(person, session_id)
            return self.session_view(session_id, person=person)
        except Local2Error as exc:
            return {self.banner: self.notice(exc)}
