"""What every part of the app shares: the agent, its UI settings, and table values."""

from __future__ import annotations

from typing import Any

from local2.agent import Agent


def table(columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    """A ``gr.Dataframe`` value: headers and rows."""
    return {"headers": columns, "data": rows}


class UIPart:
    """Base of the app's parts (chat, sessions, ratings, time travel).

    Each part lays out its own components on ``self`` and wires its own handlers; they share
    components through ``self`` (outputs are keyed by component), so they are mixed into one
    :class:`~local2.ui.app.LocalUI`.
    """

    agent: Agent

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.settings = agent.settings.ui
