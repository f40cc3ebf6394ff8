"""``local2 chat``'s grades, shown when they come: the prompt comes back at the answer.

The person first (issue 36): a chat turn's critic and memory work go on after its answer,
so the next question may be asked at once (the critic then gives way to it, and the grade
is given once the session is quiet). Each turn's grade is printed when it arrives if the
person is at the prompt (the prompt is written again after it), or else, not to cut into an
answer being written, just before the next prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from local2.cli._common import err
from local2.errors import Local2Error, TurnCancelled

if TYPE_CHECKING:
    from local2.service import Agent, BackgroundTurn

PROMPT = "you> "
# How long a grade that gave way to the next question is waited for (given once the
# session is quiet: the person may keep asking).
GRADE_WAIT_S = 600.0


class ChatGrades:
    """The grades of a chat's turns still to come, each printed once with ``show``."""

    def __init__(self, agent: Agent, show: Callable[[Mapping[str, Any]], None]) -> None:
        self.agent = agent
        self.show = show
        self._guard = threading.Lock()
        self._at_prompt = False
        self._ready: list[Mapping[str, Any]] = []
        self._following: list[threading.Thread] = []
        self.last_query_id: str | None = None  # the newest turn's (an older one's is named)

    def follow(self, turn: BackgroundTurn, on_final: Callable[[Mapping[str, Any]], None]) -> None:
        """Read the rest of ``turn`` (its answer taken) in a thread of its own: its final
        payload goes to ``on_final`` and its grade to the screen, when they come."""
        thread = threading.Thread(
            target=self._rest, args=(turn, on_final), name="local2-chat-grade", daemon=True
        )
        self._following = [t for t in self._following if t.is_alive()] + [thread]
        thread.start()

    def _rest(self, turn: BackgroundTurn, on_final: Callable[[Mapping[str, Any]], None]) -> None:
        try:
            final = turn.until_final()
        except (Local2Error, TurnCancelled, RuntimeError):  # said by the turn's own events
            return
        graded = self.agent.turns.graded(final, GRADE_WAIT_S)  # one that gave way: given later
        if graded.get("critique_pending"):
            return
        on_final(graded)
        with self._guard:
            if not self._at_prompt:
                self._ready.append(graded)
                return
            err.print()
            self._say(graded)
            print(PROMPT, end="", flush=True)

    def _say(self, graded: Mapping[str, Any]) -> None:
        if graded.get("query_id") != self.last_query_id:
            question = str(graded.get("query") or "")
            shown = question if len(question) <= 60 else question[:57] + "…"
            err.print(f"[dim]The grade of “{shown}” ({graded.get('query_id')}):[/]")
        self.show(graded)

    def prompting(self) -> None:
        """The person is given the prompt: grades that came meanwhile are shown first."""
        with self._guard:
            ready, self._ready = self._ready, []
            for graded in ready:
                self._say(graded)
            self._at_prompt = True

    def answering(self) -> None:
        """A line was entered: grades that come now wait for the next prompt."""
        with self._guard:
            self._at_prompt = False

    def finish(self, timeout: float) -> None:
        """At the chat's end: the grades still to come are waited for and shown (Ctrl+C
        leaves at once, and the agent's close then ends what is left)."""
        waiting = [t for t in self._following if t.is_alive()]
        if waiting:
            err.print("[dim]Waiting for the last grade… (Ctrl+C leaves now)[/]")
        try:
            for thread in waiting:
                thread.join(timeout)
        except KeyboardInterrupt:
            return
        self.prompting()
