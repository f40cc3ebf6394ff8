"""Who answers a compare turn, and with which services.

Respondent ``a`` is the agent's own model; ``b`` is another model, another temperature, or
both. A turn compares when its context carries ``compare`` (a
:class:`~local2.contracts._turn.CompareSpec`, the second respondent); it is context, not
state, so the next turn is an ordinary one unless it asks again. Each respondent runs with
a copy of the services holding its own chat model; tools, memory, the critic and the tool
runner are shared.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from local2.contracts import CompareSpec, RespondentSpec
from local2.errors import InvalidInput, ModelError
from local2.graph.services import ModelFactory, Services

MAX_TEMPERATURE = 2.0


def compare_spec(model: str | None = None, temperature: float | None = None) -> CompareSpec | None:
    """The second respondent asked for, or None when neither is given.

    Raises :class:`~local2.errors.InvalidInput` with a message for the person when a value
    cannot be used.
    """
    if model is None and temperature is None:
        return None
    if model is not None and not model.strip():
        raise InvalidInput("The second model's name is empty: give a model name, e.g. llama3.2:3b.")
    if temperature is not None and not 0.0 <= float(temperature) <= MAX_TEMPERATURE:
        raise InvalidInput(
            f"The second respondent's temperature must be between 0 and {MAX_TEMPERATURE:g}, "
            f"got {temperature!r}."
        )
    return {
        "model": model.strip() if model else None,
        "temperature": None if temperature is None else float(temperature),
    }


def label(model: str, temperature: float | None) -> str:
    """How a respondent is named in the arena: the model, and its temperature when set."""
    return model if temperature is None else f"{model} (t={temperature:g})"


def default_factory(services: Services) -> ModelFactory:
    """Make the second respondent's chat model the way the agent's was made, from settings.

    A model missing on the Ollama server is a clear error before the turn starts.
    """
    made: dict[tuple[str | None, float | None], Any] = {}
    lock = threading.Lock()

    def make(model: str | None, temperature: float | None) -> Any:
        from local2.models import make_chat_model

        backend = services.backend
        if backend not in ("ollama", "openai", "embedded"):
            raise ModelError(
                f"Comparing needs a second model, but this agent's model is a {backend!r} one.",
                "Run with --backend ollama (or give the agent a model_factory).",
            )
        key = (model, temperature)
        with lock:
            if key in made:
                return made[key]
        settings = services.settings
        if temperature is not None:
            generator = settings.generator.model_copy(update={"temperature": temperature})
            settings = settings.model_copy(update={"generator": generator})
        # A model Ollama does not have is a clear error here (ModelNotPulled), before answers.
        chosen = make_chat_model(settings, backend, model or services.model_name)
        with lock:
            made[key] = chosen
        return chosen

    return make


def respondent_services(
    services: Services, respondent_id: str, spec: CompareSpec | None
) -> Services:
    """The services respondent ``respondent_id`` answers with (``a``: the agent's own)."""
    if respondent_id == "a" or not spec:
        return services
    if services.model_factory is None:
        services.model_factory = default_factory(services)
    chosen = services.model_factory(spec.get("model"), spec.get("temperature"))
    return dataclasses.replace(
        services,
        chat_model=chosen.model,
        model_name=chosen.name,
        backend=chosen.backend,
        native_tools=getattr(chosen, "native_tools", True),
    )


def specs(services: Services, spec_b: CompareSpec) -> dict[str, RespondentSpec]:
    """Both respondents as they are recorded: model, temperature and arena label."""
    temperature_a = services.settings.generator.temperature
    model_b = spec_b.get("model") or services.model_name
    temperature_b = spec_b.get("temperature")
    if temperature_b is None:
        temperature_b = temperature_a
    return {
        "a": {
            "model": services.model_name,
            "temperature": temperature_a,
            "label": label(services.model_name, temperature_a),
        },
        "b": {
            "model": model_b,
            "temperature": temperature_b,
            "label": label(model_b, temperature_b),
            "spec": CompareSpec(**spec_b),
        },
    }
