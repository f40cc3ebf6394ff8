"""A run stops asking a model that failed its schema: the rule answers the later rounds.

When the plan or the gaps reply of a run's model fails its schema after its one repair, the
same model is unlikely to do better a round later, and each attempt costs a model reply. So
the run remembers that model (``schema_failed`` in its state), and its later plans and
reflections take the deterministic rule at once, saying so in the event log. The replan
after a failed step keeps asking: it is a different request, with the failure to go on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from local2.graph import Services
from local2.research.state import ResearchUpdate
from local2.research.structured import Structured

SKIPPED = "the model failed its schema earlier in this run"


def gave_up(state: Mapping[str, Any], services: Services) -> bool:
    """This run's model has already failed a plan or gaps schema (after its repair)."""
    failed = state.get("schema_failed")
    return failed is not None and failed == services.model_name


def remember(asked: Structured[Any], services: Services) -> ResearchUpdate:
    """The state update that remembers a model which failed its schema (nothing otherwise)."""
    return {"schema_failed": services.model_name} if asked.value is None and asked.attempts else {}


def skipped() -> Structured[Any]:
    """What asking gives when the model is not asked: no value, no attempts."""
    return Structured(None, [])
