"""The Research and Evaluate tabs as tab parts (:class:`~local2.ui.base.TabPart`) of the app.

Each is laid out and wired by its own module's function; Evaluate opens a question's session
in Time travel (or a run in Research), so it is given those parts and the app's tabs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import gradio as gr

if TYPE_CHECKING:  # each tab's module is loaded when the app is built
    from local2.service.agent import Agent
    from local2.ui.evaluate import EvaluateTab
    from local2.ui.research_tab import ResearchTab
    from local2.ui.timetravel import TimeTravel


class ResearchPart:
    """The Research tab (:mod:`local2.ui.research_tab`), wired as it is laid out."""

    title = "Research"
    tab_id = "research"

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.tab: ResearchTab | None = None

    def build(self, item: gr.Tab) -> None:
        from local2.ui.research_tab import research_tab

        self.tab = research_tab(self.agent, self.agent.settings.ui.concurrency_limit)

    def wire(self, demo: gr.Blocks) -> None:
        """Nothing more: :func:`research_tab` wired it."""


class EvaluatePart:
    """The Evaluate tab (:mod:`local2.ui.evaluate`): a question opens in ``time_travel``
    (switching ``tabs``), a research run in ``research``."""

    title = "Evaluate"
    tab_id = "evaluate"

    def __init__(
        self, agent: Agent, tabs: gr.Tabs, time_travel: TimeTravel, research: ResearchPart
    ) -> None:
        self.agent = agent
        self.tabs = tabs
        self.time_travel = time_travel
        self.research = research
        self.tab: EvaluateTab | None = None

    def build(self, item: gr.Tab) -> None:
        from local2.ui.evaluate import Opens, evaluate_tab

        if self.research.tab is None:
            raise RuntimeError("the Research tab is laid out before the Evaluate tab")
        travel = self.time_travel
        opens = Opens(
            self.tabs,
            travel.tt_session,
            travel.load_checkpoints,
            travel.loaded,
            self.research.tab.past,
        )
        self.tab = evaluate_tab(self.agent, self.agent.settings.ui.concurrency_limit, opens, item)

    def wire(self, demo: gr.Blocks) -> None:
        """Nothing more: :func:`evaluate_tab` wired it."""
