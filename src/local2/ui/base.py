"""What every part of the app has: the agent, its UI settings, tables, live redraws.

Each tab or panel is an object of its own (:mod:`local2.ui.app` builds them in order), given
what it uses: the agent, the shared state (:class:`~local2.ui.session_state.SessionState`),
the banner, and the other parts whose components it draws or whose handlers it calls.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Protocol

import gradio as gr

from local2.contracts import Person
from local2.errors import Local2Error, TurnCancelled
from local2.service import Agent
from local2.ui import render
from local2.ui.notices import Notice, notice_for
from local2.ui.sign_in import person_of

STREAM_INTERVAL_S = 0.05  # at most ~20 chat refreshes a second while tokens stream


def table(columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:  # Gradio's value
    """A ``gr.Dataframe`` value: headers and rows."""
    return {"headers": columns, "data": rows}


def reading_table(columns: list[str], elem_id: str, **layout: Any) -> gr.Dataframe:
    """An empty table of ``columns`` that the person reads, not edits (long cells wrap),
    redrawn with a :func:`table` or with its rows alone; ``layout``: its sizes
    (``column_widths``, ``max_height``)."""
    return gr.Dataframe(
        value=table(columns, []),
        headers=columns,
        interactive=False,
        wrap=True,
        elem_id=elem_id,
        **layout,
    )


class TabPart(Protocol):
    """A tab of the app: laid out inside its open ``gr.Tab`` (``build``), then its events
    wired once every tab is laid out (``wire``), so it may send to another tab's components."""

    title: str
    tab_id: str

    def build(self, item: gr.Tab) -> None: ...

    def wire(self, demo: gr.Blocks) -> None: ...


class UIPart:
    """Base of the app's parts: the agent, whom a handler acts for, and how a problem shows.

    A part keeps its own components and handlers; what it shares with another part it is
    given (a constructor argument), never reached through a common ``self``.
    """

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.settings = agent.settings.ui
        self.proxied = bool(agent.settings.server.trusted_user_header)  # names from a proxy

    def person(self, request: gr.Request | None) -> Person:
        """Whom a handler acts for: the person signed in to this browser (local when nobody
        is configured); :class:`~local2.ui.sign_in.SignedOut` when that is no one here."""
        return person_of(self.agent.access, self.proxied, request)

    @staticmethod
    def notice(problem: Local2Error | TurnCancelled | str) -> Any:
        """A banner's update showing ``problem`` (an error, or a note in words)."""
        shown = Notice(problem) if isinstance(problem, str) else notice_for(problem)
        return gr.update(value=shown.markdown(), visible=True)


def live(
    items: Iterator[tuple[str, Any]], view: render.TurnView, interval_s: float = STREAM_INTERVAL_S
) -> Iterator[str]:
    """Feed a turn's stream items to ``view``; yield an item's kind when the chat should be
    redrawn (thinking and answer tokens at most every ``interval_s``, everything else at once)."""
    last = 0.0
    for kind, data in items:
        view.apply(kind, data)
        now = time.monotonic()
        if kind in ("thinking", "token") and now - last < interval_s:
            continue
        last = now
        yield kind
