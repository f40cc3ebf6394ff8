"""Grades that come after the next question, filled into the chat when they arrive.

A turn's handler follows it until its answer is out, and on to its grade while the person
reads. A question asked meanwhile starts its own turn at once (the last answer's critic gives
way: docs/architecture.md, "A turn's path"), so the first handler then stops drawing: the chat
is the new turn's. Its answer keeps "Critic: grading…" until the grade is given, later; a
timer (:data:`TICK_S`, running only while the chat shows such an answer and no answer is
streaming) looks the grades up and puts each in its place, under its own answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gradio as gr

import local2.ui._render as render
from local2.contracts import Grade, Person
from local2.errors import Local2Error
from local2.service import Agent
from local2.ui._base import UIPart
from local2.ui._compare import ComparePanel
from local2.ui._conversation import Conversation
from local2.ui._session_state import SessionState
from local2.ui._updates import Updates, skipped

GRADING = f"{render.CRITIC}: grading…"  # the title of an answer's grade still to come
TICK_S = 1.0


def title_of(message: Any) -> str:
    """A chat message's title (a ``ChatMessage`` or the dict the browser sends back)."""
    metadata = message.get("metadata") if isinstance(message, dict) else message.metadata
    return str((metadata or {}).get("title") or "")


def awaiting(chat: Sequence[Any], ids: Mapping[int, str]) -> dict[int, str]:
    """The chat's places of grades still to come: ``{message index: query id}``."""
    starts = sorted(int(i) for i in ids)
    found: dict[int, str] = {}
    for n, start in enumerate(starts):
        query_id = ids.get(start) or ids.get(str(start))  # type: ignore[call-overload]  # a State may come back with string keys
        end = starts[n + 1] if n + 1 < len(starts) else len(chat)
        for index in range(start + 1, min(end, len(chat))):
            if query_id and title_of(chat[index]) == GRADING:
                found[index] = str(query_id)
    return found


def with_grades(
    chat: Sequence[Any], ids: Mapping[int, str], grades: Mapping[str, Grade]
) -> tuple[list[Any], int]:
    """The chat with each known grade in its answer's place; how many are still to come."""
    patched = list(chat)
    left = 0
    for index, query_id in awaiting(chat, ids).items():
        if query_id in grades:
            patched[index] = render.critic_message(grades[query_id])
        else:
            left += 1
    return patched, left


class GradesToCome(UIPart):
    """The timer that fills in grades given after the next question: into the chat and the
    critic's line (``conversation``), and the side-by-side of a compared turn (``compare``)."""

    def __init__(
        self, agent: Agent, state: SessionState, conversation: Conversation, compare: ComparePanel
    ) -> None:
        super().__init__(agent)
        self.state = state
        self.conversation = conversation
        self.compare = compare

    def build(self) -> None:
        self.grades_timer = gr.Timer(TICK_S, active=False)

    def wire(self) -> None:
        state, view = self.state, self.conversation
        self.grades_timer.tick(
            self.fill_grades,
            [state.session_id, state.chat_msgs, state.query_ids, self.compare.pair_target],
            [
                view.chatbot,
                state.chat_msgs,
                view.critic_md,
                self.grades_timer,
                *self.compare.pair_outputs(),
            ],
            show_progress="hidden",
        )

    def fill_grades(
        self,
        session_id: str | None,
        chat: list[Any] | None,
        ids: dict[int, str] | None,
        pair: str | None = None,
        request: gr.Request | None = None,
    ) -> Updates:
        """Put the grades given since into the chat, and into the side-by-side of the
        compared turn it shows (``pair``); the timer stops once none is awaited."""
        chat, ids = list(chat or []), dict(ids or {})
        waiting = awaiting(chat, ids)
        if not waiting or not session_id:
            return {self.grades_timer: gr.Timer(active=False)}
        if self.agent.turns.is_answering(session_id):  # the answer streaming owns the chat
            return skipped()
        try:
            person = self.person(request)
        except Local2Error:  # signed out meanwhile
            return {self.grades_timer: gr.Timer(active=False)}
        grades = self._grades_of(session_id, set(waiting.values()), person)
        if not grades:
            return skipped()
        patched, left = with_grades(chat, ids, grades)
        update: dict[Any, Any] = {
            self.conversation.chatbot: patched,
            self.state.chat_msgs: patched,
            self.grades_timer: gr.Timer(active=bool(left)),
        }
        last = ids.get(max(ids, key=int)) if ids else None
        if last in grades:
            update[self.conversation.critic_md] = render.critique_text(grades[last])
        if pair and pair in grades:  # its grades and the judge's verdict, given together
            update.update(self.compare.pair_graded(session_id, pair))
        return update

    def _grades_of(self, session_id: str, query_ids: set[str], person: Person) -> dict[str, Grade]:
        """The grades given so far of ``query_ids``, as the session's history has them."""
        try:
            self.agent.access.read_session(person, session_id)
            turns = self.agent.sessions.history(session_id, grades=True)
        except Local2Error:  # the session is gone, or not theirs: nothing to fill in
            return {}
        return {
            t["query_id"]: grade
            for t in turns
            if t["query_id"] in query_ids and (grade := t.get("critique"))
        }

    def answered(
        self, chat: list[Any], ids: dict[int, str], user: Any, view: render.TurnView
    ) -> Updates:
        """At the answer: the chat with it and its grade to come, so that a question asked
        now follows it (and the timer fills the grade in if this handler stops first)."""
        query_id = str((view.payload.get("query_id") if view.payload else None) or "")
        return {
            self.state.chat_msgs: [*chat, user, *view.messages()],
            self.state.query_ids: {**ids, len(chat): query_id},
            self.grades_timer: gr.Timer(active=True),
        }

    def graded_chat(
        self, session_id: str, chat: list[Any], ids: dict[int, str], person: Person
    ) -> tuple[list[Any], dict[Any, Any]]:
        """A finished turn's chat with the older answers' grades given meanwhile, and the
        timer running while some are still to come."""
        waiting = awaiting(chat, ids)
        if not waiting:
            return chat, {self.grades_timer: gr.Timer(active=False)}
        grades = self._grades_of(session_id, set(waiting.values()), person)
        patched, left = with_grades(chat, ids, grades)
        return patched, {self.grades_timer: gr.Timer(active=bool(left))}
