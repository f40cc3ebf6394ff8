"""The Gradio app: chat that streams, what the model did, ratings, time travel.

Every browser tab gets its own session id (``gr.State``); the sessions a browser used are
kept in its own ``localStorage`` (``gr.BrowserState``). With people configured, each signs in
(:mod:`local2.ui.sign_in`), the top of the app says who, and every handler acts for that
person: they see and continue only their own sessions, runs and votes. Handlers are sync
generators over :meth:`Agent.stream`: the queue runs several at once, so one slow answer
does not hold up anyone else's.

The app is assembled from parts, one module each: :mod:`~local2.ui.chat` (the conversation
and its panels), :mod:`~local2.ui.approval_actions` (Approve and Deny on a paused turn),
:mod:`~local2.ui.sessions`, :mod:`~local2.ui.ratings`,
:mod:`~local2.ui.timetravel`, :mod:`~local2.ui.compare` (two models side by side, the
retry), :mod:`~local2.ui.arena` and :mod:`~local2.ui.documents` (attached documents, their
hits, Index folders); the Research and Evaluate tabs are parts of their own
(:mod:`~local2.ui.research_tab`, :mod:`~local2.ui.evaluate`). This module lays them out and
wires them together.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from local2.contracts.people import LOCAL_NAME, Person
from local2.service.agent import Agent
from local2.ui import render
from local2.ui.approval import code_span
from local2.ui.approval_actions import ApprovalActions
from local2.ui.arena import Arena
from local2.ui.chat import Chat
from local2.ui.compare import Compare
from local2.ui.documents import Attachments
from local2.ui.models import ModelPicker
from local2.ui.ratings import Ratings
from local2.ui.sessions import Sessions
from local2.ui.timetravel import TimeTravel
from local2.ui.turn_panels import TurnPanels

CSS = """
#local2-banner { border-left: 4px solid #d9534f; padding: 0.4em 0.8em; }
#local2-notice { border-left: 4px solid #f0ad4e; padding: 0.4em 0.8em; }
#local2-branch-row { border-left: 4px solid #5bc0de; padding: 0.4em 0.8em; align-items: center; }
#local2-session code { font-size: 0.85em; word-break: break-all; }
#local2-header h2 { margin: 0 0 0.2em 0; }
#local2-header p { margin: 0; }
#local2-signed-in-row { align-items: center; }
/* Tables have fixed column widths (in the parts' code) and scroll sideways on a phone,
   instead of wrapping their headers letter by letter. */
#local2-memory th span, #local2-events th span, #tt-checkpoints th span,
#local2-document-hits th span { white-space: nowrap; }
.l2-eval-bar { height: 14px; background: #e6e6e6; border-radius: 7px; overflow: hidden; }
.l2-eval-bar > div { height: 100%; background: #3c8d5a; }
#eval-progress-text { margin-top: 0.3em; }
"""


class LocalUI(
    Chat, TurnPanels, ApprovalActions, Sessions, Ratings, TimeTravel, Compare, Arena, Attachments
):
    """The app's components and handlers; :meth:`build` lays them out in a ``gr.Blocks``."""

    def build(self) -> gr.Blocks:
        agent = self.agent
        info = agent.info
        with gr.Blocks(title="LoCAL2", analytics_enabled=False) as demo:
            self._session_state()
            gr.Markdown(
                f"## LoCAL2 · a local research assistant you can see inside\n"
                f"Model **{info.model}** ({info.backend}) · tools: "
                f"{', '.join(info.tools) or 'none'} · memory "
                f"{'on' if info.memory else 'off'} · critic "
                f"{'on' if info.critic else 'off'}",
                elem_id="local2-header",
            )
            self._signed_in_row()
            gr.Markdown(
                "\n\n".join(render.banner(n, kind="warning") for n in agent.notices),
                visible=bool(agent.notices),
                elem_id="local2-notice",
            )
            self.picker = ModelPicker.for_agent(agent)
            self.model_pick = gr.Dropdown(
                self.picker.choices,
                value=self.picker.value,
                label="Model",
                info=self.picker.info,
                interactive=len(self.picker.choices) > 1,
                elem_id="local2-model",
            )
            self.banner = gr.Markdown("", visible=False, elem_id="local2-banner")
            with gr.Tabs() as self.tabs:
                with gr.Tab("Chat", id="chat"):
                    self._chat_tab()
                with gr.Tab("Time travel", id="time-travel"):
                    self._time_travel_tab()
                with gr.Tab("Arena", id="arena") as self.arena_tab_item:
                    self._arena_tab()
                with gr.Tab("Research", id="research"):
                    from local2.ui.research_tab import research_tab

                    research = research_tab(agent, self.settings.concurrency_limit)
                with gr.Tab("Evaluate", id="evaluate") as evaluate:
                    self._evaluate_tab(research.past, evaluate)
                with gr.Tab("Library", id="library") as library:
                    from local2.ui.library_tab import library_tab

                    shelf = library_tab(
                        agent.library, agent.access, self.proxied, agent.settings.data_dir
                    )
                    library.select(shelf.list_entries, None, [shelf.table, shelf.status])
            self._wire(demo)
        demo.queue(default_concurrency_limit=self.settings.concurrency_limit)
        return demo

    def _evaluate_tab(self, research_run: gr.Dropdown, tab: gr.Tab) -> None:
        """The Evaluate tab; a question opens in Time travel (or a research run in Research)."""
        from local2.ui.evaluate import Opens, evaluate_tab

        loaded = [self.tt_table, self.tt_pick, self.tt_status]
        opens = Opens(self.tabs, self.tt_session, self.load_checkpoints, loaded, research_run)
        evaluate_tab(self.agent, self.settings.concurrency_limit, opens, tab)

    def _signed_in_row(self) -> None:
        with gr.Row(visible=False, elem_id="local2-signed-in-row") as self.signed_in_row:
            self.signed_in_md = gr.Markdown("", elem_id="local2-signed-in")
            gr.Button(  # Gradio's own /logout; behind a proxy, signing out is the proxy's
                "Log out",
                link="logout",
                link_target="_self",
                size="sm",
                scale=0,
                min_width=90,
                visible=not self.proxied,
                elem_id="local2-logout",
            )

    def _signed_in(self, person: Person | None, request: gr.Request | None) -> tuple[Any, str]:
        """The row saying who is signed in: shown once anyone is configured (or names come
        from a proxy); with one person, as before, nothing."""
        if not (self.proxied or self.agent.access.configured()):
            return gr.update(visible=False), ""
        if person is None:
            return gr.update(visible=True), "Not signed in as anyone this server knows."
        via = " (through the sign-in proxy)" if self.proxied and person.name != LOCAL_NAME else ""
        role = " · admin: may read everyone's sessions (each read is noted)" if person.admin else ""
        return gr.update(visible=True), f"Signed in as **{code_span(person.name)}**{via}{role}"

    def _wire(self, demo: gr.Blocks) -> None:
        self._wire_sessions(demo)
        self._wire_chat()
        self._wire_attachments()
        self._wire_ratings()
        self._wire_time_travel()
        self._wire_arena()


def build_ui(agent: Agent) -> gr.Blocks:
    """The Gradio app for ``agent``, queue configured; mount it (see ``local2.ui.server``)."""
    return LocalUI(agent).build()
