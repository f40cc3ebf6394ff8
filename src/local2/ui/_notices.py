"""The one place an error becomes what the app shows: a banner's text, its fix, its kind.

Every error LoCAL2 raises is a :class:`~local2.errors.Local2Error` with a message and, where
there is one, a fix. A failure of a part the person must repair (the model server, the
store) is an *error* with its fix; what the person can simply do differently (a question
too long, a turn still running, an unknown checkpoint) is a *warning*; a Stop is a note.
Where the banner appears, and what stays on screen, is each part's own business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import local2.ui._render as render
from local2.errors import AwaitingApproval, Local2Error, ModelError, TurnCancelled, Unavailable

STOPPED = "you pressed Stop. Nothing was recorded for it."
WAITING = "A tool call in this session is waiting: approve or deny it first."


@dataclass(frozen=True)
class Notice:
    text: str
    fix: str = ""
    kind: Literal["error", "warning", "info"] = "warning"

    def markdown(self) -> str:
        """The banner's Markdown (neutralised: error text may quote model or page text)."""
        return render.banner(self.text, self.fix, kind=self.kind)


def notice_for(exc: Local2Error | TurnCancelled) -> Notice:
    """What the person is told about ``exc``."""
    if isinstance(exc, TurnCancelled):
        return Notice(STOPPED, kind="info")
    if isinstance(exc, AwaitingApproval):
        return Notice(WAITING)
    message = (exc.message or str(exc)).strip().strip("'\"")
    if isinstance(exc, ModelError | Unavailable):
        return Notice(message, exc.fix, kind="error")
    return Notice(message, exc.fix)
