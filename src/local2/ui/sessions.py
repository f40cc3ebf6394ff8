"""Sessions in the app: each browser tab its own, a list of this browser's, new and resume."""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import gradio as gr

from local2.agent import new_session_id
from local2.ui import render
from local2.ui.base import UIPart, table

MY_SESSIONS_KEPT = 30


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
    """The session panel and the per-browser state: which session this tab is showing."""

    def _session_state(self) -> None:
        self.session_id = gr.State(None)
        self.chat_msgs = gr.State([])
        self.query_ids = gr.State({})  # index of the user message -> query_id
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

    def _wire_sessions(self, demo: gr.Blocks) -> None:
        demo.load(
            self.on_load,
            [self.my_sessions],
            [self.session_id, self.session_md, self.session_pick, self.tt_session],
        )
        session_outputs = [
            self.session_id,
            self.session_md,
            self.chatbot,
            self.chat_msgs,
            self.query_ids,
            self.memory_df,
            self.prompt_json,
            self.events_df,
            self.critic_md,
            self.reward_md,
            self.banner,
            self.tt_session,
        ]
        self.new_session.click(self.start_new_session, None, session_outputs)
        self.resume.click(self.resume_session, [self.session_pick], session_outputs)

    def _session_choices(self, mine: list[dict[str, Any]] | None) -> list[tuple[str, str]]:
        sessions = list(mine or [])
        if self.settings.list_all_sessions:
            known = {s.get("session_id") for s in sessions}
            recent = self.agent.sessions(MY_SESSIONS_KEPT)
            sessions += [s for s in recent if s["session_id"] not in known]
        return render.session_choices(sessions)

    @staticmethod
    def _session_label(session_id: str) -> str:
        return f"Session `{session_id}`"

    def on_load(self, mine: list[dict[str, Any]] | None) -> tuple[Any, ...]:
        session_id = new_session_id()
        return (
            session_id,
            self._session_label(session_id),
            gr.update(choices=self._session_choices(mine), value=None),
            session_id,
        )

    def _session_view(self, session_id: str, chat: list[Any], ids: dict[int, str]) -> dict:
        """Outputs that show a session: its chat, and the panels of its last turn."""
        panels: dict[str, Any] = {"hits": [], "events": [], "prompt": [], "critique": None}
        if self.agent.exists(session_id):
            state = self.agent.state(session_id)
            panels = {
                "hits": state.get("memory_hits") or [],
                "events": state.get("event_log") or [],
                "prompt": self.agent.prompt_messages(session_id),
                "critique": state.get("critique"),
            }
        return {
            self.session_id: session_id,
            self.session_md: self._session_label(session_id),
            self.chatbot: chat,
            self.chat_msgs: chat,
            self.query_ids: ids,
            self.memory_df: table(render.MEMORY_COLUMNS, render.memory_rows(panels["hits"])),
            self.prompt_json: panels["prompt"],
            self.events_df: table(render.EVENT_COLUMNS, render.event_rows(panels["events"])),
            self.critic_md: render.critique_text(panels["critique"]),
            self.reward_md: "",
            self.banner: gr.update(value="", visible=False),
            self.tt_session: session_id,
        }

    def start_new_session(self) -> dict:
        return self._session_view(new_session_id(), [], {})

    def resume_session(self, session_id: str | None) -> dict:
        session_id = (session_id or "").strip()
        if not session_id or not self.agent.exists(session_id):
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
        chat, ids = self._history_chat(session_id)
        return self._session_view(session_id, chat, ids)

    def _history_chat(self, session_id: str) -> tuple[list[Any], dict[int, str]]:
        turns = self.agent.history(session_id, limit=200)
        chat = render.history_messages(turns)
        ids = {2 * i: str(t["query_id"]) for i, t in enumerate(turns)}
        return chat, ids

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
