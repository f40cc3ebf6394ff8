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

import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gradio as gr

from local2.contracts import HistoryTurn, Person
from local2.errors import InvalidId, Local2Error, NotFound
from local2.ids import check_session_id, new_session_id
from local2.ui import render, transcript
from local2.ui.base import UIPart, table
from local2.ui.updates import Updates

MY_SESSIONS_KEPT = 30
TURNS_SHOWN = 200
ON_EARLIER_BRANCH = (
    "**You are on an earlier branch of this session.** A replay or fork made a new branch, "
    "which is now the session's current one; this tab keeps showing the branch you were on, "
    "and a question asked here continues it."
)


def _browser_secret(data_dir: Path) -> str:
    """A per-installation key for the browser's session list, so it survives restarts."""
    path = data_dir / "ui_secret"
    try:
        return path.read_text().strip() or _new_secret(path)
    except OSError:
        return _new_secret(path)


def _new_secret(path: Path) -> str:
    secret = secrets.token_urlsafe(24)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_text(secret)
    except OSError:  # read-only data dir: the list just lasts as long as the server
        pass
    return secret


class Sessions(UIPart):
    """The session panel and the per-tab state: which session and branch this tab shows."""

    def _session_state(self) -> None:
        self.session_id = gr.State(None)
        self.chat_msgs = gr.State([])
        self.query_ids = gr.State({})  # index of each question in the chat -> its query_id
        self.branch = gr.State(None)  # checkpoint this tab continues from; None: the head
        self.my_sessions = gr.BrowserState(
            [], storage_key="local2-sessions", secret=_browser_secret(self.agent.settings.data_dir)
        )

    def _session_panel(self) -> None:
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

    def _branch_notice(self) -> None:
        with gr.Row(visible=False, elem_id="local2-branch-row") as self.branch_row:
            self.branch_md = gr.Markdown(ON_EARLIER_BRANCH, elem_id="local2-branch")
            self.switch_branch = gr.Button(
                "Continue on the new branch",
                size="sm",
                scale=0,
                min_width=200,
                elem_id="local2-switch-branch",
            )

    def _branch_outputs(self) -> list[Any]:
        return [self.branch, self.branch_row, self.session_md]

    def _session_outputs(self) -> list[Any]:
        return [
            self.session_id,
            self.chatbot,
            self.chat_msgs,
            self.query_ids,
            self.memory_df,
            self.document_df,
            self.attached_md,
            self.prompt_json,
            self.events_df,
            self.critic_md,
            self.banner,
            self.tt_session,
            *self._branch_outputs(),
            *self._rating_outputs(),
            *self.approval.outputs,
        ]

    def _wire_sessions(self, demo: gr.Blocks) -> None:
        demo.load(
            self.on_load,
            [self.my_sessions],
            [
                self.session_id,
                self.session_md,
                self.session_pick,
                self.tt_session,
                self.signed_in_row,
                self.signed_in_md,
            ],
        )
        # Focus the question without scrolling: `autofocus` scrolled the title off-screen.
        demo.load(
            None,
            js="() => document.querySelector('#local2-question textarea')"
            "?.focus({preventScroll: true})",
        )
        outputs = self._session_outputs()
        self.new_session.click(self.start_new_session, None, outputs)
        self.resume.click(self.resume_session, [self.session_pick], outputs)
        self.switch_branch.click(self.show_current_branch, [self.session_id], outputs)

    def _session_choices(
        self, mine: list[dict[str, Any]] | None, person: Person
    ) -> list[tuple[str, str]]:
        """The Resume list: ``person``'s sessions this browser used (and, with
        ``ui.list_all_sessions``, all their recent ones), never anyone else's."""
        used: list[Mapping[str, Any]] = [
            s for s in mine or [] if isinstance(s, dict) and s.get("session_id")
        ]
        sessions = self.agent.access.own_only(person, used, lambda s: str(s["session_id"]))
        if self.settings.list_all_sessions:
            known = {s.get("session_id") for s in sessions}
            recent = self.agent.sessions(MY_SESSIONS_KEPT, person.name)
            sessions += [s for s in recent if s["session_id"] not in known]
        return render.session_choices(sessions)

    @staticmethod
    def _session_label(session_id: str, branch: str | None = None) -> str:
        where = "an earlier branch" if branch else "its current branch"
        return f"Session `{session_id}` · showing {where}"

    def _on_branch(self, session_id: str, branch: str | None) -> Updates:
        """Outputs saying which branch this tab is on (``branch`` None: the current one)."""
        return {
            self.branch: branch,
            self.branch_row: gr.update(visible=bool(branch)),
            self.session_md: self._session_label(session_id, branch),
        }

    def on_load(
        self, mine: list[dict[str, Any]] | None, request: gr.Request | None = None
    ) -> tuple[Any, ...]:
        """A new session for a new tab, the signed-in person's Resume list, and who they are."""
        session_id = new_session_id()
        try:
            person: Person | None = self.person(request)
        except Local2Error:
            person = None  # signed out: nothing of anyone's to list
        choices = self._session_choices(mine, person) if person is not None else []
        return (
            session_id,
            self._session_label(session_id),
            gr.update(choices=choices, value=None),
            session_id,
            *self._signed_in(person, request),
        )

    def _session_view(
        self, session_id: str, branch: str | None = None, person: Person | None = None
    ) -> Updates:
        """Outputs that show one branch of a session: every turn as it was, and the panels
        of its last turn (all reset, so nothing of the previous session stays on screen)."""
        turns: list[HistoryTurn] = []
        state: Mapping[str, Any] = {}
        prompt: list[Any] = []
        if self.agent.exists(session_id):
            state = self.agent.state(session_id, branch)
            turns = self.agent.history(session_id, TURNS_SHOWN, checkpoint_id=branch, detail=True)
            prompt = self.agent.prompt_messages(session_id, branch)
        if turns and not turns[-1].get("critique"):
            turns[-1]["critique"] = state.get("critique")  # graded before grades were noted
        chat, ids = transcript.history_messages(turns)
        last: Mapping[str, Any] = turns[-1] if turns else {}
        return {
            self.session_id: session_id,
            self.chatbot: chat,
            self.chat_msgs: chat,
            self.query_ids: ids,
            self.memory_df: table(
                render.MEMORY_COLUMNS, render.memory_rows(state.get("memory_hits") or [])
            ),
            **self._attachments_view(session_id, state.get("document_hits") or [], person),
            self.prompt_json: prompt,
            self.events_df: table(
                render.EVENT_COLUMNS, render.event_rows(state.get("event_log") or [])
            ),
            self.critic_md: render.critique_text(last.get("critique")),
            self.banner: gr.update(value="", visible=False),
            self.tt_session: session_id,
            **self._on_branch(session_id, branch),
            **self._rating_target(None, last.get("user"), enabled=bool(turns)),
            **(self._waiting_panel(session_id, chat) if branch is None else self.approval.hide()),
        }

    def start_new_session(self) -> Updates:
        return self._session_view(new_session_id())

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
        if not readable or not self.agent.exists(session_id):
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
        return self._session_view(session_id, person=self.person(request))

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
            return self._session_view(session_id, person=person)
        except Local2Error as exc:
            return {self.banner: self.notice(exc)}

    @staticmethod
    def _remember(
        mine: list[dict[str, Any]] | None, session_id: str, question: str
    ) -> list[dict[str, Any]]:
        sessions = [dict(s) for s in mine or [] if isinstance(s, dict)]
        current = next((s for s in sessions if s.get("session_id") == session_id), None)
        if current is None:
            current = {"session_id": session_id, "first": question, "turns": 0}
        sessions = [s for s in sessions if s.get("session_id") != session_id]
        current["turns"] = int(current.get("turns") or 0) + 1
        current["updated_at"] = time.time()
        return [current, *sessions][:MY_SESSIONS_KEPT]
