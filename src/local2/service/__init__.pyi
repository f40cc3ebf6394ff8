from . import wiring as wiring
from ._forwarded.arena import Rating as Rating
from ._forwarded.arena import arena as arena
from ._forwarded.arena import as_csv as as_csv
from ._forwarded.arena import as_json as as_json
from ._forwarded.evals import percent as percent
from ._forwarded.evals import say_duration as say_duration
from ._forwarded.evals import say_rate as say_rate
from ._forwarded.evals import short_rate as short_rate
from ._forwarded.graph import TurnGraph as TurnGraph
from ._forwarded.graph import TurnState as TurnState
from ._forwarded.graph import turn_payload as turn_payload
from ._forwarded.memory import owner_folder as owner_folder
from ._forwarded.models import ScriptedChatModel as ScriptedChatModel
from ._forwarded.models import canonical as canonical
from ._forwarded.models import chat_models as chat_models
from ._forwarded.models import list_models as list_models
from ._forwarded.research import ResearchGraph as ResearchGraph
from ._forwarded.research import link_citations as link_citations
from ._forwarded.research import plain as plain
from ._forwarded.research import safe_url as safe_url
from ._forwarded.research import why_found as why_found
from ._forwarded.storage import People as People
from ._forwarded.storage import check_name as check_name
from ._forwarded.storage import platform_store as platform_store
from ._forwarded.storage import private_dir as private_dir
from ._forwarded.storage import token_hash as token_hash
from ._forwarded.storage import write_private as write_private
from ._forwarded.storage import write_private_bytes as write_private_bytes
from ._forwarded.stories import StoryResult as StoryResult
from ._forwarded.stories import load_stories as load_stories
from ._forwarded.stories import run_stories as run_stories
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
from .research._research import Research as Research
from .sign_in import bearer as bearer
from .sign_in import challenge as challenge
from .warmup import Warmup as Warmup
from .watches._desk import WatchDesk as WatchDesk
from .watches._desk import open_watch_desk as open_watch_desk
from .wiring import ModelParts as ModelParts
from .wiring import build_graph as build_graph
from .wiring import build_platform_graph as build_platform_graph
from .wiring import build_platform_research_graph as build_platform_research_graph
from .wiring import build_research_graph as build_research_graph
from .wiring import wire as wire

__all__ = [
    "Access",
    "Agent",
    "BackgroundTurn",
    "DocumentDesk",
    "DocumentPages",
    "Evals",
    "LibraryDesk",
    "MemoryDesk",
    "ModelParts",
    "OwnText",
    "People",
    "Rating",
    "Research",
    "ResearchGraph",
    "ScriptedChatModel",
    "Searcher",
    "StoryResult",
    "TurnGraph",
    "TurnState",
    "Warmup",
    "WatchDesk",
    "arena",
    "as_csv",
    "as_json",
    "audit_call",
    "bearer",
    "build_graph",
    "build_platform_graph",
    "build_platform_research_graph",
    "build_research_graph",
    "canonical",
    "challenge",
    "chat_models",
    "check_name",
    "link_citations",
    "list_models",
    "load_stories",
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
    "owner_folder",
    "people_alone",
    "percent",
    "plain",
    "platform_store",
    "private_dir",
    "run_checks",
    "run_stories",
    "safe_url",
    "say_duration",
    "say_rate",
    "short_rate",
    "token_hash",
    "turn_options",
    "turn_payload",
    "warming_agent",
    "why_found",
    "wire",
    "wiring",
    "write_private",
    "write_private_bytes",
]
