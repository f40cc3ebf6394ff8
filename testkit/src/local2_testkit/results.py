"""Reading what the shipped tools return, for tests and benchmarks: a ``web_fetch`` result's
page text, and the web tools as research steps."""

from __future__ import annotations

from local2.config import Settings
from local2.research import StepTools
from local2.tools import RESULT_HEAD, web_tools


def extracted_text(result: str) -> str:
    """The page text of a ``URL: <url>\nExtracted text:\n<text>`` result."""
    return result.partition(RESULT_HEAD)[2]


def web_steps() -> StepTools:
    """``web_search`` and ``web_fetch`` as shipped, as research steps."""
    return StepTools.of(web_tools(Settings()))
