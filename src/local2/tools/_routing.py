"""The keyword router: the last fallback for models that cannot call tools.

It runs only for a model without native tool calling (the embedded model, or an Ollama
model whose capabilities lack ``tools``), never over a tool-capable model's own choice.
When such a model answers without calling anything, a few unmistakable cues in the question
still deserve a tool: a URL (read it), time-sensitive words (search), or a reference to an
earlier conversation or to the person's own details (recall). It is deliberately
conservative: an ordinary question such as "What is the capital of France?" routes nowhere.

Each tool carries its own cue (:attr:`local2.tools._base.Tool.cue`), next to the code that
runs it; this module only orders them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

from local2.contracts import PendingCall
from local2.ids import new_call_id
from local2.tools._base import Cue, Tool

__all__ = ["Cue", "first_url", "route"]

_URL = re.compile(r"\bhttps?://[^\s<>\"'`]+", re.I)
_URL_TRAILING = ".,;:!?)]}>*_"


def first_url(query: str) -> str | None:
    """The first URL in ``query``, without the punctuation that ends its sentence."""
    m = _URL.search(query)
    return m.group().rstrip(_URL_TRAILING) if m else None


def route(query: str, tools: Iterable[Tool], today: dt.date | None = None) -> list[PendingCall]:
    """Calls (``{"name", "args", "id"}``) the question's cues ask for; at most one per tool.

    A URL wins over searching (the page is what was asked about); "remember that ..." saves
    it; a question about an earlier conversation or the person's own details recalls memory
    and does not also search the web.
    """
    query = (query or "").strip()
    if not query:
        return []
    today = today or dt.date.today()
    cued = sorted((t for t in tools if t.cue is not None), key=lambda t: t.cue.rank)  # type: ignore[union-attr]  # filtered to tools with a cue
    calls: list[PendingCall] = []
    for tool in cued:
        cue = tool.cue
        assert cue is not None
        if cue.last_resort and calls:
            continue
        args = cue.args(query, today)
        if args is None or any(c["name"] == tool.name for c in calls):
            continue
        calls.append({"name": tool.name, "args": args, "id": new_call_id()})
        if cue.alone:
            break
    return calls
