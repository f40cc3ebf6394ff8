from ._plan import apply_edit as apply_edit
from ._state import ResearchContext as ResearchContext
from ._state import ResearchState as ResearchState
from ._state import StepTools as StepTools
from ._state import source_list as source_list
from ._state import step_catalog as step_catalog
from ._state import url_key as url_key
from .graph import ResearchGraph as ResearchGraph
from .graph import compile_research_graph as compile_research_graph
from .graph import research_services as research_services
from .payload import finished_status as finished_status
from .payload import research_payload as research_payload
from .report import late_grade as late_grade
from .stated_claims import StatedClaim as StatedClaim
from .stated_claims import report_claims as report_claims
from .verify import link_citations as link_citations
from .verify import plain as plain
from .verify import safe_url as safe_url
from .verify import why_found as why_found

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
