"""The service (docs/architecture.md): the :class:`~local2.service.agent.Agent`, which
composes its one-job parts (``agent.turns``, ``agent.sessions``...: the "One way in" table),
built in one place (:mod:`.wiring`). The surfaces (CLI, HTTP API, app) talk to the agent's
parts and to this face, nothing below it but other packages' faces (an import-linter
contract keeps them out).

The face (below) lists only the service's own names: the agent and how it is built, the
turn options, sign-in (:mod:`.sign_in`), and what the commands that open no agent need
(stores opened alone, the desks, reports). A name of a package below (a vote's rating, the
people roster) is imported from that package's face. Each name is loaded on first use, so
``import local2.service`` costs nothing and a command pays only for what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
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
else:
    __getattr__ = lazy_face(__name__, __file__)
