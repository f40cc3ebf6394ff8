from . import wiring as wiring
from ._problems import Problem as Problem
from ._problems import invalid_fields as invalid_fields
from ._problems import problem as problem
from ._problems import status_of as status_of
from .access import Access as Access
from .access import opened_access as opened_access
from .access import people_alone as people_alone
from .agent import Agent as Agent
from .chat._background import BackgroundTurn as BackgroundTurn
from .chat._turns import turn_options as turn_options
from .desks._audit import audit_call as audit_call
from .desks._audit import own_run as own_run
from .desks._audit import own_runs as own_runs
from .desks._audit import own_votes as own_votes
from .desks._documents import DocumentDesk as DocumentDesk
from .desks._documents import open_desk as open_desk
from .desks._library import LibraryDesk as LibraryDesk
from .desks._library import open_library as open_library
from .desks._memory import MemoryDesk as MemoryDesk
from .desks._own_text import DocumentPages as DocumentPages
from .desks._own_text import OwnText as OwnText
from .desks._own_text import own_text_of as own_text_of
from .desks._search import Searcher as Searcher
from .desks._search import open_searcher as open_searcher
from .doctor import run_checks as run_checks
from .evals._evals import Evals as Evals
from .opening import offline_agent as offline_agent
from .opening import offline_parts as offline_parts
from .opening import warming_agent as warming_agent
from .research import Exported as Exported
from .research import export_format as export_format
from .research import export_run as export_run
from .research import run_scope as run_scope
from .research import run_sources as run_sources
from .research._research import Research as Research
from .sign_in import UNAUTHORISED as UNAUTHORISED
from .sign_in import Guard as Guard
from .sign_in import Identify as Identify
from .sign_in import Network as Network
from .sign_in import bearer as bearer
from .sign_in import challenge as challenge
from .sign_in import identify as identify
from .sign_in import networks as networks
from .sign_in import trusted as trusted
from .warmup import Warmup as Warmup
from .watches._desk import WatchDesk as WatchDesk
from .watches._desk import open_watch_desk as open_watch_desk
from .watches._feed import FEED_PATH as FEED_PATH
from .watches._watching import Watching as Watching
from .wiring import ModelParts as ModelParts
from .wiring import build_graph as build_graph
from .wiring import build_platform_graph as build_platform_graph
from .wiring import build_platform_research_graph as build_platform_research_graph
from .wiring import build_research_graph as build_research_graph
from .wiring import wire as wire

__all__ = [
    "FEED_PATH",
    "UNAUTHORISED",
    "Access",
    "Agent",
    "BackgroundTurn",
    "DocumentDesk",
    "DocumentPages",
    "Evals",
    "Exported",
    "Guard",
    "Identify",
    "LibraryDesk",
    "MemoryDesk",
    "ModelParts",
    "Network",
    "OwnText",
    "Problem",
    "Research",
    "Searcher",
    "Warmup",
    "WatchDesk",
    "Watching",
    "audit_call",
    "bearer",
    "build_graph",
    "build_platform_graph",
    "build_platform_research_graph",
    "build_research_graph",
    "challenge",
    "export_format",
    "export_run",
    "identify",
    "invalid_fields",
    "networks",
    "offline_agent",
    "offline_parts",
    "open_desk",
    "open_library",
    "open_searcher",
    "open_watch_desk",
    "opened_access",
    "own_run",
    "own_runs",
    "own_text_of",
    "own_votes",
    "people_alone",
    "problem",
    "run_checks",
    "run_scope",
    "run_sources",
    "status_of",
    "trusted",
    "turn_options",
    "warming_agent",
    "wire",
    "wiring",
]
