"""Acceptance stories (DESIGN §6): YAML conversations checked against the live HTTP API."""

from local2.stories.runner import (
    Story,
    StoryError,
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
