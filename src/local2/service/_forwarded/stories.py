"""What the service's face forwards from :mod:`local2.stories`."""

from local2.stories import StoryResult, load_stories, run_stories

__all__ = ["StoryResult", "load_stories", "run_stories"]
