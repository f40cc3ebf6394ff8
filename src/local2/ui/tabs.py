"""The Research and Evaluate tabs as tab parts (:class:`~local2.ui.base.TabPart`) of the app.

Each is laid out and wired by its own module's class; Evaluate opens a question's session in
Time travel (or a run in Research), so it is given those parts and the app's tabs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import gradio as gr

if TYPE_CHECKING:
    from local2.service import Agent
    from local2.ui.timetravel import TimeTravel


class ResearchPart:
    """The Research tab (:mod:`local2.ui.research_tab`), wired as it is laid out."""

    title = "Research"
    tab_id = "research"

    def __init__(self, agent: Agent) -> None:
        from local2.ui.research_tab import ResearchTab  # loaded when the app is built

        self.tab = ResearchTab(agent)
        self.concurrency_limit = agent.settings.ui.concurrency_limit

    def build(self, item: gr.Tab) -> None:
        self.tab.build(self.concurrency_limit)

    def wire(self, demo: gr.Blocks) -> None:
        """Nothing more: :meth:`~local2.ui.research_tab.ResearchTab.build` wired it."""


class EvaluatePart:
    """The Evaluate tab (:mod:`local2.ui.evaluate`): a question opens in ``time_travel``
    (switching ``tabs``), a research run in ``research`` (laid out before this tab)."""

    title = "Evaluate"
    tab_id = "evaluate"

    def __init__(
        self, agent: Agent, tabs: gr.Tabs, time_travel: TimeTravel, research: ResearchPart
    ) -> None:
        from local2.ui.evaluate import EvaluateTab  # loaded when the app is built

        self.tab = EvaluateTab(agent)
        self.concurrency_limit = agent.settings.ui.concurrency_limit
        self.tabs = tabs
        self.time_travel = time_travel
        self.research = research

    def build(self, item: gr.Tab) -> None:
        from local2.ui.evaluate import Opens

        travel = self.time_travel
        opens = Opens(
            self.tabs,
            travel.tt_session,
            travel.load_checkpoints,
            travel.loaded,
            self.research.tab.past,
        )
        self.tab.build(self.concurrency_limit, opens, item)

    def wire(self, demo: gr.Blocks) -> None:
        """Nothing more: :meth:`~local2.ui.evaluate.EvaluateTab.build` wired it."""


class LibraryPart:
    """The Library tab (:mod:`local2.ui.library_tab`): what was read, listed when opened,
    and opened at an entry by a link (``?library=<id>``, switching ``tabs``)."""

    title = "Library"
    tab_id = "library"

    def __init__(self, agent: Agent, tabs: gr.Tabs) -> None:
        self.agent = agent
        self.tabs = tabs
        self.proxied = bool(agent.settings.server.trusted_user_header)

    def build(self, item: gr.Tab) -> None:
        from local2.ui.library_tab import library_tab  # loaded when the app is built

        agent = self.agent
        self.shelf = library_tab(agent.library, agent.access, self.proxied, agent.settings.data_dir)
        item.select(self.shelf.list_entries, None, [self.shelf.table, self.shelf.status])

    def wire(self, demo: gr.Blocks) -> None:
        """The app opened at a link to a kept copy: this tab, the entry shown."""
        shelf = self.shelf
        opened = [self.tabs, shelf.pick, shelf.text, shelf.original, shelf.status]
        demo.load(shelf.opened, None, opened)
