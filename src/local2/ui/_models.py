"""The app's model picker: the chat models Ollama has, each labelled with what it can do.

Picking one answers the next questions with it (same sessions, memory and tools); a model
that is not pulled is never offered, and when Ollama does not answer the picker says so and
keeps the model in use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from local2.errors import ModelUnavailable
from local2.models import canonical, chat_models, list_models

if TYPE_CHECKING:
    from local2.service import Agent


@dataclass
class ModelPicker:
    """Choices ``(label, name)`` for a dropdown, the model in use, and a line about them."""

    choices: list[tuple[str, str]]
    value: str
    info: str
    problem: str | None = None  # why Ollama offered nothing (its error's message)
    _agents: dict[str, Agent] = field(default_factory=dict, repr=False)

    @classmethod
    def for_agent(cls, agent: Agent) -> ModelPicker:
        answering = agent.info
        current = answering.model
        in_use = (f"{current} — in use ({answering.backend})", current)
        try:
            models = chat_models(list_models(agent.settings.ollama_host))
        except ModelUnavailable as exc:
            return cls([in_use], current, f"{exc.message} {exc.fix}".strip(), exc.message)
        choices = [(f"{m.name} — {m.summary()}", m.name) for m in models]
        if all(canonical(name) != canonical(current) for _, name in choices):
            choices.insert(0, in_use)
        info = "The models Ollama has. Without tool calling, tools are offered in the prompt."
        return cls(choices, current, info)

    def worth_showing(self, notices: list[str]) -> bool:
        """Whether the picker tells the person anything: a choice to make, or a problem no
        start-up notice already names (one notice per cause)."""
        if len(self.choices) > 1:
            return True
        return self.problem is not None and not any(self.problem in n for n in notices)

    def agent_for(self, agent: Agent, name: str | None) -> Agent:
        """``agent``, or one sharing its sessions and memory that answers with ``name``.
        Raises :class:`~local2.models._ollama_failures.ModelError` when that model cannot be
        used."""
        if not name or canonical(name) == canonical(agent.info.model):
            return agent
        if name not in self._agents:
            self._agents[name] = agent.with_model(name)
        return self._agents[name]
