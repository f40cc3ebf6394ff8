"""The Gradio app: chat that streams, what the model did, ratings, time travel.

Every browser tab gets its own session id (``gr.State``); the sessions a browser used are
kept in its own ``localStorage`` (``gr.BrowserState``). With people configured, each signs in
(:mod:`local2.ui._sign_in`), the top of the app says who, and every handler acts for that
person: they see and continue only their own sessions, runs and votes. Handlers are sync
generators over ``agent.turns.stream``: the queue runs several at once, so one slow answer
does not hold up anyone else's.

The app is composed of parts, each an object given what it uses: the agent, the per-tab
state (:class:`~local2.ui._session_state.SessionState`), the top of the page
(:class:`~local2.ui._header.Header`: the banner, the model picker) and the other parts it
draws into or calls. The tabs are :meth:`LocalUI.tab_parts`, in order, each laid out in its
own ``gr.Tab`` and then wired; the Chat tab is composed of its panels in
:mod:`~local2.ui._chat_tab`. A tab is one module, ``ui/_<name>_tab.py``, whose ``<Name>Tab`` is
its part (:class:`~local2.ui._base.TabPart`); a new tab is one more line in that list and
touches no other.
"""

from __future__ import annotations

import gradio as gr

from local2.service import Agent
from local2.ui._arena_tab import ArenaTab
from local2.ui._base import TabPart
from local2.ui._chat_tab import ChatTab
from local2.ui._evaluate_tab import EvaluateTab
from local2.ui._header import Header
from local2.ui._library_tab import LibraryTab
from local2.ui._research_tab import ResearchTab
from local2.ui._session_panel import SessionPanel
from local2.ui._session_state import SessionState
from local2.ui._time_travel_tab import TimeTravelTab
from local2.ui._watches_tab import WatchesTab

CSS = """
#local2-banner { border-left: 4px solid #d9534f; padding: 0.4em 0.8em; }
#local2-notice { border-left: 4px solid #f0ad4e; padding: 0.3em 0.8em; }
#local2-notice p { margin: 0.15em 0; font-size: 0.92em; line-height: 1.35; }
#local2-branch-row { border-left: 4px solid #5bc0de; padding: 0.4em 0.8em; align-items: center; }
#local2-session code { font-size: 0.85em; word-break: break-all; }
#local2-header h2 { margin: 0 0 0.2em 0; }
#local2-header p { margin: 0; }
#local2-signed-in-row { align-items: center; }
/* Gradio drops a checkbox's min_width: on a phone its label wrapped letter by letter. */
#local2-compare { min-width: min(160px, 100%) !important; }
/* The question box stays in the first screen: the chat is as tall as what is left of it
   (tests/ui/test_ui_browser.py measures it at 1280x900 and 390x844). */
@media (max-width: 640px) {
  #local2-header h2 { font-size: 1.25em; }
  #local2-header p { font-size: 0.85em; }
  #local2-notice p { font-size: 0.85em; }
  #local2-chat { height: 21vh !important; min-height: 170px !important; }
  #local2-ask-row > .form { min-width: 100% !important; }  /* Send and Stop go under it */
  #local2-model .info-text { display: none; }
}
/* Tables fit their panel (widths in per cent, in the parts' code); below a width that
   keeps their headers on one line they scroll sideways, with a scroll bar one can see. */
#local2-memory th span, #local2-events th span, #tt-checkpoints th span,
#local2-document-hits th span { white-space: nowrap; }
#local2-memory table, #local2-document-hits table, #local2-events table { min-width: 420px; }
/* Gradio draws tables in its monospace font, headers in bold: every table in the app's. */
.gradio-container table, .gradio-container .virtual-row { font-family: var(--font); }
#local2-memory .virtual-table-viewport, #local2-document-hits .virtual-table-viewport,
#local2-events .virtual-table-viewport { scrollbar-width: auto; scrollbar-color: #9a9a9a #eee; }
.l2-eval-bar { height: 14px; background: #e6e6e6; border-radius: 7px; overflow: hidden; }
.l2-eval-bar > div { height: 100%; background: #3c8d5a; }
#eval-progress-text { margin-top: 0.3em; }
.l2-hidden { display: none !important; }  /* mounted, not shown: ui/_research_steer.py */
"""
# Gradio's default theme with the bold face of its font too: without it, bold text is
# drawn in another font, wider and taller, and reads as a heading in the middle of a line.
THEME = gr.themes.Default(
    font=(
        gr.themes.LocalFont("Source Sans Pro", weights=(400, 600, 700)),
        "ui-sans-serif",
        "system-ui",
        "sans-serif",
    ),
    font_mono=(
        gr.themes.LocalFont("IBM Plex Mono", weights=(400, 600, 700)),
        "ui-monospace",
        "Consolas",
        "monospace",
    ),
)


class LocalUI:
    """The app: its parts, built in order, laid out in a ``gr.Blocks`` by :meth:`build`."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.settings = agent.settings.ui

    def build(self) -> gr.Blocks:
        agent = self.agent
        with gr.Blocks(title="LoCAL2", analytics_enabled=False) as demo:
            self.state = SessionState.create(agent.settings.data_dir)
            self.header = Header(agent)
            self.header.build()
            with gr.Tabs() as tabs:
                self.parts = self.tab_parts(tabs)
                for part in self.parts:
                    with gr.Tab(part.title, id=part.tab_id) as item:
                        part.build(item)
            for part in self.parts:  # once all are laid out: a part may draw into another tab
                part.wire(demo)
        blocks: gr.Blocks = demo.queue(default_concurrency_limit=self.settings.concurrency_limit)
        return blocks

    def tab_parts(self, tabs: gr.Tabs) -> list[TabPart]:
        """The tabs, in the order shown, each given the parts it uses."""
        agent = self.agent
        sessions = SessionPanel(agent, self.state)  # the Chat tab's, followed by time travel
        self.time_travel = TimeTravelTab(agent, self.state, sessions)
        self.chat_tab = ChatTab(agent, self.state, self.header, sessions, self.time_travel)
        research = ResearchTab(agent)
        return [
            self.chat_tab,
            self.time_travel,
            ArenaTab(agent),
            research,
            WatchesTab(agent),
            EvaluateTab(agent, tabs, self.time_travel, research),
            LibraryTab(agent, tabs),
        ]


def build_ui(agent: Agent) -> gr.Blocks:
    """The Gradio app for ``agent``, queue configured; mount it (``local2.ui._mount``)."""
    return LocalUI(agent).build()
