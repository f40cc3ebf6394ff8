"""Acceptance stories (docs/architecture.md): YAML conversations checked against the live HTTP API.

The runner (and httpx with it) is imported on first use, so the CLI, which registers the
``stories`` command from this package, starts without it.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "Story",
    "StoryError",
    "StoryResult",
    "TurnSpec",
    "check_turn",
    "load_stories",
    "run_stories",
    "run_story",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from local2.stories import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
