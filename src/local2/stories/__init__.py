"""Acceptance stories (docs/architecture.md): YAML conversations checked against the live HTTP API.

Its face imports the runner (and httpx with it); the CLI starts without it because the
service's face forwards these names one at a time, on first use.
"""

from local2.errors import StoryError
from local2.stories._runner import (
    Story,
    StoryResult,
    TurnSpec,
    check_turn,
    load_stories,
    run_stories,
    run_story,
)

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
