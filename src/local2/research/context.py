"""A research run's context: the chat graph's (:class:`~local2.graph.context.TurnContext`)
and the run's inbox, through which what the person says reaches it while it runs.

Like every context it is not checkpointed: the service passes it on every run and resume,
and a run that brings none (a notebook, LangGraph Server) gets the graph's default, with
the inbox it was compiled with (none on the Server: a say there has nowhere to go).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from local2.graph import TurnContext

if TYPE_CHECKING:
    from local2.storage import SteerInbox


@dataclass(frozen=True, slots=True)
class ResearchContext(TurnContext):
    inbox: SteerInbox | None = None
