"""The Chat tab, composed: each panel is a part of its own, built here in the order of what
it uses, laid out where the tab shows it, then wired.

What uses what (each is given the parts before it that it draws into or calls):

- :class:`~local2.ui.conversation.Conversation` (the chat, the approval panel, the critic's
  line), :class:`~local2.ui.turn_panels.TurnPanels` and
  :class:`~local2.ui.documents.Attachments`: drawn into by the parts below.
- :class:`~local2.ui.ratings.Ratings`: the rating row; shows a rating in the chat.
- :class:`~local2.ui.compare.ComparePanel`: the compare switch, a pair, the retry row.
- :class:`~local2.ui.chat_sources.ChatSources`: where web search looks (folded), kept in the
  browser.
- :class:`~local2.ui.late_grades.GradesToCome`: grades given after the next question.
- :class:`~local2.ui.chat.Chat`: the question and its turn, streamed into all of the above
  and the session panel (:class:`~local2.ui.session_panel.SessionPanel`, the app's, shared with
  Time travel).
- :class:`~local2.ui.approval_actions.ApprovalActions` (Approve, Deny, Stop) and
  :class:`~local2.ui.compare_actions.CompareActions` (prefer, show an attempt, retry): go on
  through the chat's turn, or redraw a session.
- :class:`~local2.ui.sessions.Sessions`: shows a session (a new tab's, new, resumed) in all
  of them and in time travel's session box.
"""

from __future__ import annotations

import gradio as gr

from local2.service import Agent
from local2.ui.approval_actions import ApprovalActions
from local2.ui.chat import Chat
from local2.ui.chat_sources import ChatSources
from local2.ui.compare import ComparePanel
from local2.ui.compare_actions import CompareActions
from local2.ui.conversation import Conversation
from local2.ui.documents import Attachments
from local2.ui.header import Header
from local2.ui.late_grades import GradesToCome
from local2.ui.ratings import Ratings
from local2.ui.session_panel import SessionPanel
from local2.ui.session_state import SessionState
from local2.ui.sessions import Sessions
from local2.ui.time_travel_tab import TimeTravelTab
from local2.ui.turn_panels import TurnPanels


class ChatTab:
    """The Chat tab's parts, built in order; :meth:`build` lays them out, :meth:`wire` wires."""

    title = "Chat"
    tab_id = "chat"

    def __init__(
        self,
        agent: Agent,
        state: SessionState,
        header: Header,
        session_panel: SessionPanel,
        time_travel: TimeTravelTab,
    ) -> None:
        banner = header.banner
        self.session_panel = session_panel
        self.conversation = Conversation()
        self.panels = TurnPanels()
        self.documents = Attachments(agent, state, banner)
        self.ratings = Ratings(agent, state, banner, self.conversation, self.panels)
        self.compare = ComparePanel(agent, header.picker)
        self.sources = ChatSources(agent, agent.settings.data_dir)
        self.grades = GradesToCome(agent, state, self.conversation, self.compare)
        self.chat = Chat(
            agent,
            state,
            header,
            self.conversation,
            self.panels,
            self.documents,
            self.compare,
            self.ratings,
            self.grades,
            session_panel,
            self.sources,
        )
        self.approvals = ApprovalActions(agent, state, self.chat)
        self.sessions = Sessions(
            agent,
            state,
            header,
            session_panel,
            self.conversation,
            self.panels,
            self.documents,
            self.ratings,
            time_travel,
        )
        self.compare_actions = CompareActions(
            agent, state, self.compare, self.chat, self.sessions, session_panel, self.ratings
        )

    def build(self, item: gr.Tab) -> None:
        with gr.Row(equal_height=False):
            with gr.Column(scale=3, min_width=320):
                self.session_panel.build_branch_notice()
                self.conversation.build_chat()
                self.chat.build()
                self.documents.build_attach()
                self.compare.build_controls()
                self.sources.build()
                self.conversation.build_approval()
                self.compare.build_panel()
                self.conversation.build_critic()
                self.grades.build()
                self.ratings.build()
            with gr.Column(scale=2, min_width=300):
                self.session_panel.build()
                self.panels.build(self.documents)

    def wire(self, demo: gr.Blocks) -> None:
        self.sessions.wire(demo)
        self.chat.wire()
        self.sources.wire(demo)
        self.approvals.wire()
        self.compare_actions.wire()
        self.grades.wire()
        self.documents.wire()
        self.ratings.wire()
