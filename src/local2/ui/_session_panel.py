"""The session panel beside the chat (which session and branch this tab shows, New session,
Resume) and the notice of an earlier branch above it.

What the chat and time travel say about where this tab is; showing a session is
:mod:`local2.ui._sessions`'s.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import gradio as gr

import local2.ui._render as render
from local2.contracts import Person
from local2.service import Agent
from local2.ui._base import UIPart
from local2.ui._session_state import SessionState
from local2.ui._updates import Updates

MY_SESSIONS_KEPT = 30
ON_EARLIER_BRANCH = (
    "**You are on an earlier branch of this session.** A replay or fork made a new branch, "
    "which is now the session's current one; this tab keeps showing the branch you were on, "
    "and a question asked here continues it."
)


class SessionPanel(UIPart):
    """The session panel (which session this tab shows, new, resume) and the notice of an
    earlier branch: what the chat and time travel say about where this tab is."""

    def __init__(self, agent: Agent, state: SessionState) -> None:
        super().__init__(agent)
        self.state = state

    def build(self) -> None:
        with gr.Accordion("Session", open=True):
            self.session_md = gr.Markdown("", elem_id="local2-session")
            with gr.Row():
                self.new_session = gr.Button("New session", size="sm")
            self.session_pick = gr.Dropdown(
                choices=[],
                label="Resume a session: pick a recent one or paste its id",
                allow_custom_value=True,
                elem_id="local2-session-pick",
            )
            self.resume = gr.Button("Resume", size="sm", elem_id="local2-resume")

    def build_branch_notice(self) -> None:
        with gr.Row(visible=False, elem_id="local2-branch-row") as self.branch_row:
            self.branch_md = gr.Markdown(ON_EARLIER_BRANCH, elem_id="local2-branch")
            self.switch_branch = gr.Button(
                "Continue on the new branch",
                size="sm",
                scale=0,
                min_width=200,
                elem_id="local2-switch-branch",
            )

    def branch_outputs(self) -> list[Any]:
        return [self.state.branch, self.branch_row, self.session_md]

    # mine: this browser's sessions, as its BrowserState sends them back (unchecked)
    def choices(self, mine: list[dict[str, Any]] | None, person: Person) -> list[tuple[str, str]]:
        """The Resume list: ``person``'s sessions this browser used (and, with
        ``ui.list_all_sessions``, all their recent ones), never anyone else's."""
        used: list[Mapping[str, Any]] = [
            s for s in mine or [] if isinstance(s, dict) and s.get("session_id")
        ]
        sessions = self.agent.access.own_only(person, used, lambda s: str(s["session_id"]))
        if self.settings.list_all_sessions:
            known = {s.get("session_id") for s in sessions}
            recent = self.agent.sessions.recent(MY_SESSIONS_KEPT, person.name)
            sessions += [s for s in recent if s["session_id"] not in known]
        return render.session_choices(sessions)

    @staticmethod
    def label(session_id: str, branch: str | None = None) -> str:
        where = "an earlier branch" if branch else "its current branch"
        return f"Session `{session_id}` · showing {where}"

    def on_branch(self, session_id: str, branch: str | None) -> Updates:
        """Outputs saying which branch this tab is on (``branch`` None: the current one)."""
        return {
            self.state.branch: branch,
            self.branch_row: gr.update(visible=bool(branch)),
            self.session_md: self.label(session_id, branch),
        }

    @staticmethod
    def remember(
        mine: list[dict[str, Any]] | None,  # this browser's sessions, as its BrowserState
        session_id: str,
        question: str,
    ) -> list[dict[str, Any]]:  # kept in the browser again (session_id, first, turns, ...)
        sessions = [dict(s) for s in mine or [] if isinstance(s, dict)]
        current = next((s for s in sessions if s.get("session_id") == session_id), None)
        if current is None:
            current = {"session_id": session_id, "first": question, "turns": 0}
        sessions = [s for s in sessions if s.get("session_id") != session_id]
        current["turns"] = int(current.get("turns") or 0) + 1
        current["updated_at"] = time.time()
        return [current, *sessions][:MY_SESSIONS_KEPT]
