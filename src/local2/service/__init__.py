"""The service (docs/architecture.md): the :class:`~local2.service.agent.Agent` façade and its
one-job parts, built in one place (:mod:`.wiring`). The surfaces (CLI, HTTP API, app) talk
to the agent and to this face, nothing below it (an import-linter contract keeps them out).

``__all__`` is what a surface may use: the agent and how it is built, the turn options,
and what the commands that open no agent need (stores opened alone, reports, the test
stories). Each name is loaded on first use, so ``import local2.service`` costs nothing and a
command pays only for what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.arena.ratings import Rating
    from local2.arena.report import arena, as_csv, as_json
    from local2.evals.stats import percent, say_duration, say_rate, short_rate
    from local2.graph.payload import turn_payload
    from local2.graph.topology import TurnGraph
    from local2.memory.owners import owner_folder
    from local2.models.ollama_catalog import canonical, chat_models, list_models
    from local2.models.scripted import ScriptedChatModel
    from local2.research.verify import link_citations, plain, safe_url, why_found
    from local2.service import wiring
    from local2.service.access import Access, opened_access, people_alone
    from local2.service.agent import Agent
    from local2.service.audit import own_run, own_runs, own_votes
    from local2.service.background import BackgroundTurn
    from local2.service.doctor import run_checks
    from local2.service.evals import Evals
    from local2.service.memory_desk import MemoryDesk
    from local2.service.opening import offline_agent, offline_parts, warming_agent
    from local2.service.research import Research
    from local2.service.turns import turn_options
    from local2.service.warmup import Warmup
    from local2.service.wiring import (
        ModelParts,
        build_graph,
        build_platform_graph,
        build_platform_research_graph,
        build_research_graph,
        wire,
    )
    from local2.storage.people import People, check_name, token_hash
    from local2.storage.private_files import private_dir, write_private
    from local2.storage.store_turn_log import platform_store
    from local2.stories.runner import StoryResult, load_stories, run_stories

# name -> the module that defines it
_FACE = {
    "Agent": "local2.service.agent",
    "Access": "local2.service.access",
    "opened_access": "local2.service.access",
    "people_alone": "local2.service.access",
    "BackgroundTurn": "local2.service.background",
    "ModelParts": "local2.service.wiring",
    "Research": "local2.service.research",
    "Evals": "local2.service.evals",
    "say_rate": "local2.evals.stats",
    "say_duration": "local2.evals.stats",
    "percent": "local2.evals.stats",
    "short_rate": "local2.evals.stats",
    "Warmup": "local2.service.warmup",
    "warming_agent": "local2.service.opening",
    "offline_agent": "local2.service.opening",
    "offline_parts": "local2.service.opening",
    "run_checks": "local2.service.doctor",
    "wiring": "local2.service.wiring",
    "turn_options": "local2.service.turns",
    "wire": "local2.service.wiring",
    "build_graph": "local2.service.wiring",
    "build_research_graph": "local2.service.wiring",
    "build_platform_graph": "local2.service.wiring",
    "build_platform_research_graph": "local2.service.wiring",
    "TurnGraph": "local2.graph.topology",  # the compiled chat graph's type
    "ResearchGraph": "local2.research.graph",  # the compiled research graph's type
    "platform_store": "local2.storage.store_turn_log",
    "ScriptedChatModel": "local2.models.scripted",  # a notebook's or benchmark's model
    "canonical": "local2.models.ollama_catalog",
    "chat_models": "local2.models.ollama_catalog",
    "list_models": "local2.models.ollama_catalog",
    # payloads and reports as the surfaces show them
    "turn_payload": "local2.graph.payload",
    "arena": "local2.arena.report",
    "as_csv": "local2.arena.report",
    "as_json": "local2.arena.report",
    "Rating": "local2.arena.ratings",  # a row of the arena table
    "link_citations": "local2.research.verify",
    "plain": "local2.research.verify",
    "safe_url": "local2.research.verify",
    "why_found": "local2.research.verify",
    # stores a command opens alone (no agent)
    "People": "local2.storage.people",
    "check_name": "local2.storage.people",
    "token_hash": "local2.storage.people",
    "owner_folder": "local2.memory.owners",
    "private_dir": "local2.storage.private_files",
    "write_private": "local2.storage.private_files",
    "MemoryDesk": "local2.service.memory_desk",
    "own_runs": "local2.service.audit",
    "own_run": "local2.service.audit",
    "own_votes": "local2.service.audit",
    # acceptance stories against a served API
    "StoryResult": "local2.stories.runner",
    "load_stories": "local2.stories.runner",
    "run_stories": "local2.stories.runner",
    "DocumentDesk": "local2.service.documents",
    "LibraryDesk": "local2.service.library_desk",
    "open_library": "local2.service.library_desk",
    "open_desk": "local2.service.documents",
}

__all__ = [
    "Access",
    "Agent",
    "BackgroundTurn",
    "DocumentDesk",
    "Evals",
    "LibraryDesk",
    "MemoryDesk",
    "ModelParts",
    "People",
    "Rating",
    "Research",
    "ResearchGraph",
    "ScriptedChatModel",
    "StoryResult",
    "TurnGraph",
    "Warmup",
    "arena",
    "as_csv",
    "as_json",
    "build_graph",
    "build_platform_graph",
    "build_platform_research_graph",
    "build_research_graph",
    "canonical",
    "chat_models",
    "check_name",
    "link_citations",
    "list_models",
    "load_stories",
    "offline_agent",
    "offline_parts",
    "open_desk",
    "open_library",
    "opened_access",
    "own_run",
    "own_runs",
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
]


__getattr__ = lazy_face(__name__, _FACE)
