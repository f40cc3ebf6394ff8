"""The research graph for LangGraph Server, named in langgraph.json (``local2-research``).

A run's input is ``{"question": ..., "review": true, "clarify": "auto"}`` on a thread of its
own (the thread is the run). A pause (the plan under review, a clarifying question) is the
thread's interrupt, kept by the platform's checkpointer: Studio shows it with its form (the
``response_schema`` of :class:`local2.contracts._research_input.ResearchInput`), and a run
resumed with ``Command(resume={"approve": true})`` (or ``{"plan": ...}``, ``{"answer": ...}``)
goes on from it. A follow-up is a new run on the same thread with ``{"followup": ...}``.
Whose run it is comes from the platform's auth (``identify``, as for the chat graph). Says
while it runs (``/steer``) need the run's inbox, which only ``local2 serve`` has.
"""

from __future__ import annotations

from local2.config import Settings
from local2.platform.graph import identify, owners_store
from local2.research import ResearchGraph
from local2.service import build_platform_research_graph


def make_graph(settings: Settings | None = None) -> ResearchGraph:
    """The research graph with no checkpointer or local file of its own (the server
    supplies both)."""
    return build_platform_research_graph(settings, owners_store, identify)


# Built when LangGraph Server loads this file (it looks the name up in the module).
graph = make_graph()
