"""Opening an agent for a command: with its warm-up started early, or offline.

A command that runs the model (``ask``, ``chat``, ``serve``...) has its chat model chosen
first, so that the model's warm-up (:mod:`local2.service.warmup`: the embedded model reading
its fixed prompt start) runs while the graph and memory are still loading; the offline
embedding model's loading is added once memory is open. A command that only reads or rates
sessions opens the store with no model server, tools, critic or memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from local2.config import Settings
from local2.service.warmup import Warmup, embedder_task, prompt_prefix_task

if TYPE_CHECKING:  # the graph is imported only by what opens an agent (offline_parts does not)
    from local2.service.agent import Agent
    from local2.service.wiring import ModelParts


def warming_agent(
    settings: Settings,
    backend: str | None = None,
    model: str | None = None,
    warmup: Warmup | None = None,
) -> Agent:
    """The agent for a command that runs the model, its warm-up given to ``warmup`` (a
    paused one the caller starts later holds it; none: one that starts at once). Raises
    what choosing the model raises (:class:`~local2.errors.ModelNotPulled`, ...)."""
    # lazy: langgraph, langchain_core, local2.tools: ~1.0 s, 1142 modules at import
    from local2.models import make_chat_model
    from local2.service.agent import Agent

    chosen = make_chat_model(settings, backend=backend, model=model)
    warmup = warmup or Warmup()
    prefix = prompt_prefix_task(settings, chosen.model, chosen.backend)
    if prefix is not None:
        warmup.add("prompt prefix", prefix)
    agent = Agent(
        settings,
        chat_model=chosen.model,
        backend=chosen.backend,
        model=chosen.name,
        notice=chosen.notice,
        native_tools=chosen.native_tools,
    )
    loading = embedder_task(agent.services.memory)
    if loading is not None:
        warmup.add("embedding model", loading)
    return agent


def offline_parts() -> ModelParts:
    """For reading sessions and runs: no model server, tools, critic or memory."""
    # lazy: langchain_core, pydantic, local2.models: ~603 ms, 660 modules at import
    from local2.models import ScriptedChatModel

    return {
        "chat_model": ScriptedChatModel(),
        "tools": [],
        "memory": None,
        "critic": None,
        "backend": "none",
    }


def offline_agent(settings: Settings) -> Agent:
    """An agent for reading and rating sessions (a rating's annotation waits for memory:
    :mod:`local2.memory.deferred`)."""
    # lazy: langgraph, langchain_core, local2.tools: ~780 ms, 1140 modules at import
    from local2.service.agent import Agent

    return Agent(settings, **offline_parts())
