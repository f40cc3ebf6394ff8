"""Research mode: plan, execute, replan, reflect, compose, verify (docs/architecture.md).

:mod:`.graph` declares the graph; :class:`local2.service.research.Research` runs, resumes and
lists runs for the CLI, the HTTP API and the app; ``local2.build_research_graph(settings)`` is
the graph for notebooks.
"""

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.research._plan import apply_edit as apply_edit
    from local2.research._state import ResearchContext as ResearchContext
    from local2.research._state import ResearchState as ResearchState
    from local2.research._state import source_list as source_list
    from local2.research._state import step_catalog as step_catalog
    from local2.research._state import url_key as url_key
    from local2.research.graph import ResearchGraph as ResearchGraph
    from local2.research.graph import compile_research_graph as compile_research_graph
    from local2.research.graph import research_services as research_services
    from local2.research.payload import finished_status as finished_status
    from local2.research.payload import research_payload as research_payload
    from local2.research.report import late_grade as late_grade
    from local2.research.stated_claims import StatedClaim as StatedClaim
    from local2.research.stated_claims import report_claims as report_claims
    from local2.research.verify import link_citations as link_citations
    from local2.research.verify import plain as plain
    from local2.research.verify import safe_url as safe_url
    from local2.research.verify import why_found as why_found
else:
    __getattr__ = lazy_face(__name__, __file__)
