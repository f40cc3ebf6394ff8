"""Acceptance stories (docs/architecture.md): YAML conversations checked against the live HTTP API.

The runner (and httpx with it) is imported on first use, so the CLI, which registers the
``stories`` command from this package, starts without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from local2.faces import lazy_face

if TYPE_CHECKING:
    from local2.errors import StoryError as StoryError
    from local2.stories.runner import Story as Story
    from local2.stories.runner import StoryResult as StoryResult
    from local2.stories.runner import TurnSpec as TurnSpec
    from local2.stories.runner import check_turn as check_turn
    from local2.stories.runner import load_stories as load_stories
    from local2.stories.runner import run_stories as run_stories
    from local2.stories.runner import run_story as run_story
else:
    __getattr__ = lazy_face(__name__, __file__)
