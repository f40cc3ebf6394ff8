from ._graph import ResearchGraph as ResearchGraph
from ._graph import compile_research_graph as compile_research_graph
from ._graph import research_services as research_services
from ._plan import apply_edit as apply_edit
from ._report import finished_status as finished_status
from ._report import late_grade as late_grade
from ._report import research_payload as research_payload
from ._state import ResearchContext as ResearchContext
from ._state import ResearchState as ResearchState
from ._state import StepTools as StepTools
from ._state import source_list as source_list
from ._state import step_catalog as step_catalog
from ._state import url_key as url_key
from ._verify import StatedClaim as StatedClaim
from ._verify import link_citations as link_citations
from ._verify import plain as plain
from ._verify import report_claims as report_claims
from ._verify import safe_url as safe_url
from ._verify import why_found as why_found

__all__ = [
    "ResearchContext",
    "ResearchGraph",
    "ResearchState",
    "StatedClaim",
    "StepTools",
    "apply_edit",
    "compile_research_graph",
    "finished_status",
    "late_grade",
    "link_citations",
    "plain",
    "report_claims",
    "research_payload",
    "research_services",
    "safe_url",
    "source_list",
    "step_catalog",
    "url_key",
    "why_found",
]
