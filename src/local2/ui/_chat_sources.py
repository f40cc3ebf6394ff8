"""Where chat's web search looks (docs/chat.md, "Where web search looks"): a picker folded
under the question, its label saying the choice, so a newcomer sees one line.

The web (the configured search), the person's library and the scholarly sources, by the
names research takes (``web``, ``library``, ``arxiv``...). The turn's ``web_search`` then
asks each of them through the same sourced search as a research run, and its hits carry
their records (date, authors, DOI...). The choice is kept in this browser's
``localStorage`` (``gr.BrowserState``, as the sessions it used are) and comes back on the
next visit; a browser that never chose sees ``web.search.sources``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gradio as gr

from local2.service import Agent
from local2.ui._base import UIPart
from local2.ui._research_tab import SCHOLARLY
from local2.ui._session_state import browser_secret

# the scholarly sources named as the Research tab names them
SOURCES = [("The web", "web"), ("My library", "library"), *SCHOLARLY]
_LABELS = {name: label.split(" (")[0] for label, name in SOURCES}
TITLE = "Where web search looks"


def known(names: Sequence[Any] | None) -> list[str]:
    """``names`` that are sources, in order, each once (a stale browser's others dropped)."""
    return list(dict.fromkeys(str(n) for n in names or [] if str(n) in _LABELS))


def title(names: Sequence[str]) -> str:
    """The fold's label: what it holds, and the choice in force."""
    return f"{TITLE}: {', '.join(_LABELS[n] for n in names)}" if names else TITLE


class ChatSources(UIPart):
    """The sources picker (:meth:`build`, under the question) and its memory in the browser
    (:meth:`wire`); :meth:`inputs` is what a turn reads of it."""

    def __init__(self, agent: Agent, data_dir: Path) -> None:
        super().__init__(agent)
        self.default = known(agent.settings.web.search.sources) or ["web"]
        self.data_dir = data_dir

    def build(self) -> None:
        with gr.Accordion(
            title(self.default), open=False, elem_id="local2-chat-sources-box"
        ) as self.box:
            self.picker = gr.Dropdown(
                SOURCES,
                value=self.default,
                multiselect=True,
                label="Search these",
                info="Papers and encyclopedias each through its own public API; "
                "every hit shows its date or 'undated'. Kept in this browser.",
                elem_id="local2-chat-sources",
            )
        self.kept = gr.BrowserState(
            None, storage_key="local2-chat-sources", secret=browser_secret(self.data_dir)
        )

    def inputs(self) -> list[Any]:
        return [self.picker]

    def wire(self, demo: gr.Blocks) -> None:
        demo.load(self.restore, [self.kept], [self.picker, self.box])
        self.picker.change(self.chosen, [self.picker], [self.kept, self.box])

    def restore(self, kept: list[Any] | None) -> tuple[Any, Any]:
        """The browser's last choice (none kept: the settings')."""
        names = known(kept) or self.default
        return gr.update(value=names), gr.update(label=title(names))

    def chosen(self, names: list[str] | None) -> tuple[list[str] | None, Any]:
        """Kept in the browser as picked; nothing picked is the settings' choice."""
        picked = known(names)
        return (picked or None), gr.update(label=title(picked or self.default))

    def asked(self, names: Sequence[Any] | None) -> list[str]:
        """What a turn searches: the picked sources (none: the settings')."""
        return known(names) or self.default
