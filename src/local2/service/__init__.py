"""The service (docs/architecture.md): the :class:`~local2.service.agent.Agent` façade and its
one-job parts, built in one place (:mod:`.wiring`). The surfaces (CLI, HTTP API, app) talk
to the agent and to this face, nothing below it (an import-linter contract keeps them out).

The face (below) is what a surface may use: the agent and how it is built, the turn options,
and what the commands that open no agent need (stores opened alone, reports, the test
stories). Each name is loaded on first use, so ``import local2.service`` costs nothing and a
command pays only for what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.arena import Rating as Rating
    from local2.arena import arena as arena
    from local2.arena import as_csv as as_csv
    from local2.arena import as_json as as_json
    from local2.evals import percent as percent
    from local2.evals import say_duration as say_duration
    from local2.evals import say_rate as say_rate
    from local2.evals import short_rate as short_rate
    from local2.graph import TurnGraph as TurnGraph
    from local2.graph import TurnState as TurnState
    from local2.graph import turn_payload as turn_payload
    from local2.memory import owner_folder as owner_folder
    from local2.models import ScriptedChatModel as ScriptedChatModel
    from local2.models import canonical as canonical
    from local2.models import chat_models as chat_models
    from local2.models import list_models as list_models
    from local2.research import ResearchGraph as ResearchGraph
    from local2.research import link_citations as link_citations
    from local2.research import plain as plain
    from local2.research import safe_url as safe_url
    from local2.research import why_found as why_found
    from local2.service import wiring as wiring
    from local2.service.access import Access as Access
    from local2.service.access import opened_access as opened_access
    from local2.service.access import people_alone as people_alone
    from local2.service.agent import Agent as Agent
    from local2.service.chat._background import BackgroundTurn as BackgroundTurn
    from local2.service.chat._turns import turn_options as turn_options
    from local2.service.desks._audit import audit_call as audit_call
    from local2.service.desks._audit import own_run as own_run
    from local2.service.desks._audit import own_runs as own_runs
    from local2.service.desks._audit import own_votes as own_votes
    from local2.service.desks._documents import DocumentDesk as DocumentDesk
    from local2.service.desks._documents import open_desk as open_desk
    from local2.service.desks._library import LibraryDesk as LibraryDesk
    from local2.service.desks._library import open_library as open_library
    from local2.service.desks._memory import MemoryDesk as MemoryDesk
    from local2.service.desks._own_text import DocumentPages as DocumentPages
    from local2.service.desks._own_text import OwnText as OwnText
    from local2.service.desks._own_text import own_text_of as own_text_of
    from local2.service.desks._search import Searcher as Searcher
    from local2.service.desks._search import open_searcher as open_searcher
    from local2.service.doctor import run_checks as run_checks
    from local2.service.evals._evals import Evals as Evals
    from local2.service.opening import offline_agent as offline_agent
    from local2.service.opening import offline_parts as offline_parts
    from local2.service.opening import warming_agent as warming_agent
    from local2.service.research._research import Research as Research
    from local2.service.sign_in import UNAUTHORISED as UNAUTHORISED
    from local2.service.sign_in import Guard as Guard
    from local2.service.sign_in import Identify as Identify
    from local2.service.sign_in import Network as Network
    from local2.service.sign_in import bearer as bearer
    from local2.service.sign_in import challenge as challenge
    from local2.service.sign_in import identify as identify
    from local2.service.sign_in import networks as networks
    from local2.service.sign_in import trusted as trusted
    from local2.service.warmup import Warmup as Warmup
    from local2.service.watches._desk import WatchDesk as WatchDesk
    from local2.service.watches._desk import open_watch_desk as open_watch_desk
    from local2.service.wiring import ModelParts as ModelParts
    from local2.service.wiring import build_graph as build_graph
    from local2.service.wiring import build_platform_graph as build_platform_graph
    from local2.service.wiring import build_platform_research_graph as build_platform_research_graph
    from local2.service.wiring import build_research_graph as build_research_graph
    from local2.service.wiring import wire as wire
    from local2.storage import People as People
    from local2.storage import check_name as check_name
    from local2.storage import platform_store as platform_store
    from local2.storage import private_dir as private_dir
    from local2.storage import token_hash as token_hash
    from local2.storage import write_private as write_private
    from local2.storage import write_private_bytes as write_private_bytes
    from local2.stories import StoryResult as StoryResult
    from local2.stories import load_stories as load_stories
    from local2.stories import run_stories as run_stories
else:
    __getattr__ = lazy_face(__name__, __file__)
