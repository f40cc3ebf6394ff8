"""Research mode: plan, execute, replan, reflect, compose, verify (docs/architecture.md).

:mod:`.graph` declares the graph; :class:`local2.service.research.Research` runs, resumes and
lists runs for the CLI, the HTTP API and the app; ``local2.build_research_graph(settings)`` is
the graph for notebooks.
"""

from local2.faces import lazy_face

# What other packages use, by the module that defines it (loaded on first use).
_FACE = {
    "ResearchContext": "local2.research.context",
    "ResearchGraph": "local2.research.graph",
    "apply_edit": "local2.research.subquestions",
    "step_catalog": "local2.research.step_tools",
    "ResearchState": "local2.research.state",
    "compile_research_graph": "local2.research.graph",
    "finished_status": "local2.research.payload",
    "late_grade": "local2.research.report",
    "link_citations": "local2.research.verify",
    "plain": "local2.research.verify",
    "research_payload": "local2.research.payload",
    "research_services": "local2.research.graph",
    "safe_url": "local2.research.verify",
    "source_list": "local2.research.ledger",
    "why_found": "local2.research.verify",
}
__getattr__ = lazy_face(__name__, _FACE)

__all__ = [
    "ResearchContext",
    "ResearchGraph",
    "ResearchState",
    "apply_edit",
    "compile_research_graph",
    "finished_status",
    "late_grade",
    "link_citations",
    "plain",
    "research_payload",
    "research_services",
    "safe_url",
    "source_list",
    "step_catalog",
    "why_found",
]
