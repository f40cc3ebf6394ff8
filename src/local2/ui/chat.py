"""The chat tab: a question streams into thinking, tool calls, the answer and the grade.

One answer at a time per session: a question sent while one is being answered is refused with a
note (it stays in the box); once the answer is out, the next question goes ahead while the critic
grades (it gives way, and the grade is filled in later: :mod:`local2.ui.late_grades`). Stop ends
the running turn before its answer with nothing recorded; what had streamed stays on screen,
marked abandoned, as it does when the model fails. A turn that pauses for the
person's approval (docs/architecture.md, "Trust boundaries") shows the approval panel; Approve or
Deny continues it in the same chat message.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradio as gr

from local2.contracts import NO_OPTIONS, Person
from local2.errors import (
    Conflict,
    InvalidId,
    InvalidInput,
    Local2Error,
    TurnCancelled,
    UnknownTurn,
)
from local2.ids import check_session_id, new_session_id
from local2.service import Agent
from local2.ui import render
from local2.ui.approval import Paused
from local2.ui.base import UIPart, live, table
from local2.ui.chat_sources import ChatSources
from local2.ui.compare import ComparePanel
from local2.ui.conversation import Conversation
from local2.ui.documents import Attachments
from local2.ui.header import Header
from local2.ui.late_grades import GradesToCome
from local2.ui.notices import notice_for
from local2.ui.ratings import Ratings
from local2.ui.safe_markdown import neutralise
from local2.ui.session_panel import SessionPanel
from local2.ui.session_state import SessionState
from local2.ui.turn_panels import TurnPanels
from local2.ui.updates import Updates

BUSY = (
    "Still answering your previous question: wait for it, or press Stop. "
    "Your new question stays in the box."
)


# Its example works offline; the one that needs a search says so (issue 52).
EXAMPLE_PROMPT = (
    "Ask something, e.g. How does a heat pump work? "
    "(News, such as this week's AI news, needs the web.)"
)

# Once a turn is drawn, the question box is on screen again (a banner or a long answer may
# have pushed it down), ready for the next question; a phone's keyboard is not opened.
BACK_TO_THE_QUESTION = """() => {
  const box = document.querySelector('#local2-question textarea');
  if (!box) return;
  box.scrollIntoView({block: 'nearest'});
  if (window.innerWidth > 640) box.focus({preventScroll: true});
}"""


class Chat(UIPart):
    """The question box and the turn it asks: streamed into the conversation and every panel
    of the Chat tab (each given: what it draws into and how)."""

    def __init__(
        self,
        agent: Agent,
        state: SessionState,
        header: Header,
        conversation: Conversation,
        panels: TurnPanels,
        documents: Attachments,
        compare: ComparePanel,
        ratings: Ratings,
        grades: GradesToCome,
        sessions: SessionPanel,
        sources: ChatSources | None = None,
    ) -> None:
        super().__init__(agent)
        self.sources = sources
        self.state = state
        self.header = header
        self.banner = header.banner
        self.conversation = conversation
        self.panels = panels
        self.documents = documents
        self.compare = compare
        self.ratings = ratings
        self.grades = grades
        self.sessions = sessions

    def build(self) -> None:
        """The question, Send and Stop, under the conversation."""
        with gr.Row(elem_id="local2-ask-row"):
            self.question = gr.Textbox(
                placeholder=EXAMPLE_PROMPT,
                show_label=False,
                scale=5,
                min_width=180,
                elem_id="local2-question",
            )
            self.send = gr.Button(
                "Send", variant="primary", scale=1, min_width=70, elem_id="local2-send"
            )
            self.stop_btn = gr.Button(
                "Stop",
                variant="stop",
                scale=1,
                min_width=70,
                interactive=False,
                elem_id="local2-stop",
            )

    def outputs(self) -> list[Any]:
        """What a turn draws (asked, approved or denied, or tried again)."""
        state, view, panels = self.state, self.conversation, self.panels
        return [
            view.chatbot,
            state.chat_msgs,
            self.question,
            self.banner,
            panels.memory_df,
            self.documents.document_df,
            self.documents.attached_md,
            panels.prompt_json,
            panels.events_df,
            view.critic_md,
            state.query_ids,
            state.my_sessions,
            self.sessions.session_pick,
            self.ratings.reward_md,
            self.stop_btn,
            *self.ratings.outputs(),
            *self.sessions.branch_outputs(),
            *view.approval.outputs,
            *self.compare.outputs(),
            self.grades.grades_timer,
        ]

    def wire(self) -> None:
        state = self.state
        chat_inputs = [
            self.question,
            state.session_id,
            state.chat_msgs,
            state.query_ids,
            state.my_sessions,
            state.branch,
            self.header.model_pick,
            *self.compare.inputs(),
            *(self.sources.inputs() if self.sources is not None else []),
        ]
        for trigger in (self.question.submit, self.send.click):
            trigger(
                self.respond,
                chat_inputs,
                self.outputs(),
                concurrency_limit=self.settings.concurrency_limit,
                show_progress="minimal",
                trigger_mode="multiple",  # a second question gets an answer: "still busy"
            ).then(None, js=BACK_TO_THE_QUESTION)

    # -- a turn ----------------------------------------------------------------------------

    def respond(
        self,
        question: str,
        session_id: str | None,
        chat: list[Any],
        ids: dict[int, str],
        mine: list[dict[str, Any]] | None,  # this browser's sessions, as its BrowserState
        branch: str | None = None,
        model: str | None = None,
        request: gr.Request | None = None,  # who is signed in (Gradio fills it in)
        # the Compare switch, model B, temperature B (local2.ui.compare), then the sources
        # picked (local2.ui.chat_sources)
        *more: Any,
    ) -> Iterator[Updates]:
        """Stream one turn into the chat (answered by ``model`` from the picker, its web
        search looking where the sources picker says) as the signed-in person's; errors
        become a banner, never a traceback."""
        compare, picked = more[:3], (more[3] if len(more) > 3 else None)
        chat, ids, question = list(chat or []), dict(ids or {}), question or ""
        try:  # the turn's one check of its id: the service and the panels are handed it checked
            session_id = check_session_id(session_id) if session_id else new_session_id()
        except InvalidId as exc:
            yield {self.banner: self.notice(exc), self.question: question}
            return
        if self.agent.turns.is_answering(session_id):
            yield {self.banner: self.notice(BUSY), self.question: question}
            return
        options, problem = self.compare.options(*compare) if compare else (NO_OPTIONS, None)
        if problem:
            yield {self.banner: self.notice(problem), self.question: question}
            return
        if self.sources is not None and len(more) > 3:
            try:
                options = self.agent.turns.with_sources(options, self.sources.asked(picked))
            except InvalidInput as exc:
                yield {self.banner: self.notice(exc), self.question: question}
                return
        user = gr.ChatMessage(role="user", content=neutralise(question))
        view = render.TurnView(question, grading=self.agent.info.critic)
        try:
            agent = self.header.picker.agent_for(self.agent, model)
            person = self.person(request)
        except Local2Error as exc:  # a model that cannot answer, or signed out
            yield {self.banner: self.notice(exc), self.question: question}
            return

        def items() -> Iterator[tuple[str, Any]]:  # a bad question raises inside follow
            yield from agent.turns.stream(
                question, session_id, checkpoint_id=branch, options=options, person=person
            )

        yield from self.follow(items(), view, chat, ids, user, session_id, mine, person, question)

    def follow(
        self,
        items: Iterator[tuple[str, Any]],
        view: render.TurnView,
        chat: list[Any],
        ids: dict[int, str],
        user: gr.ChatMessage,
        session_id: str,
        mine: list[dict[str, Any]] | None,  # this browser's sessions, as its BrowserState
        person: Person,
        question: str = "",
    ) -> Iterator[Updates]:
        """Stream ``person``'s turn's items into the chat until it ends, fails, stops, or
        pauses for them; errors become a banner, never a traceback."""
        shown = False
        try:
            for kind in live(items, view):
                update: dict[Any, Any] = {
                    self.conversation.chatbot: [*chat, user, *view.messages()]
                }
                if not shown:
                    shown = True
                    update.update(self._turn_started())
                if kind == "event":
                    update[self.panels.events_df] = table(
                        render.EVENT_COLUMNS, render.event_rows(view.events)
                    )
                elif kind == "answer":  # published: too late to stop, the grade follows
                    update[self.stop_btn] = gr.update(interactive=False)
                    update.update(self.grades.answered(chat, ids, user, view))
                    if view.payload and view.payload.get("respondents"):  # to be judged
                        update.update(self.compare.pair_view(view.payload))
                yield update
        except (Local2Error, TurnCancelled) as exc:
            yield self._failed(exc, shown, chat, ids, user, view, question)
            return
        if view.payload and view.payload.get("critique_pending"):  # the next question came:
            return  # the chat is its turn's now, and the grade will be filled in when given
        yield self._turn_done(session_id, chat, ids, user, view, mine, person)

    def _failed(
        self,
        exc: Local2Error | TurnCancelled,
        shown: bool,
        chat: list[Any],
        ids: dict[int, str],
        user: gr.ChatMessage,
        view: render.TurnView,
        question: str,
    ) -> Updates:
        """A turn that ended in ``exc``: the question back in the box, whatever had streamed
        kept and marked abandoned, and a banner saying why (a Stop needs none)."""
        said = notice_for(exc)
        if isinstance(exc, TurnCancelled):
            view.fail(said.text)
            return self._abandoned(chat, ids, user, view, question)
        if isinstance(exc, InvalidInput | Conflict):  # the person can just ask differently
            gr.Warning(said.text)
        failed: Updates = {self.banner: self.notice(exc), self.question: question}
        if not shown:  # nothing reached the screen: the banner says it all
            return failed
        view.fail(said.text)
        return {**self._abandoned(chat, ids, user, view, question), **failed}

    def _turn_started(self) -> Updates:
        return {
            self.question: "",
            self.banner: gr.update(value="", visible=False),
            self.conversation.critic_md: "",
            self.ratings.reward_md: "",
            self.stop_btn: gr.update(value="Stop", interactive=True),
            **self.ratings.enabled(False),
            **self.compare.compare_hidden(),
        }

    def _turn_done(
        self,
        session_id: str,
        chat: list[Any],
        ids: dict[int, str],
        user: gr.ChatMessage,
        view: render.TurnView,
        mine: list[dict[str, Any]] | None,  # this browser's sessions, as its BrowserState
        person: Person,
    ) -> Updates:
        payload = view.payload
        ids = {**ids, len(chat): str((payload.get("query_id") if payload else None) or "")}
        turn_chat, timer = self.grades.graded_chat(
            session_id, [*chat, user, *view.messages()], ids, person
        )
        mine = self.sessions.remember(mine, session_id, view.query)
        try:
            prompt = self.agent.sessions.prompt_messages(session_id)
        except UnknownTurn:
            prompt = []
        paused = self.conversation.approval.hide()
        if payload and payload.get("status") == "awaiting_approval":
            pending: Paused = {"view": view, "chat": chat, "user": user}
            waiting = payload.get("approval") or {"calls": [], "resume": None}
            paused = self.conversation.approval.show(waiting, pending)
        return {
            **paused,
            **timer,
            self.conversation.chatbot: turn_chat,
            self.state.chat_msgs: turn_chat,
            self.state.query_ids: ids,
            self.state.my_sessions: mine,
            self.sessions.session_pick: gr.update(choices=self.sessions.choices(mine, person)),
            self.panels.memory_df: table(
                render.MEMORY_COLUMNS,
                render.memory_rows((payload.get("memory_hits") if payload else None) or []),
            ),
            **self.documents.view(
                session_id, (payload.get("document_hits") if payload else None) or [], person
            ),
            self.panels.prompt_json: prompt,
            self.panels.events_df: table(render.EVENT_COLUMNS, render.event_rows(view.events)),
            self.conversation.critic_md: render.critique_text(view.critique)
            or ("Critic: off" if not self.agent.info.critic else ""),
            self.stop_btn: gr.update(value="Stop", interactive=False),
            # A turn asked on an earlier branch continues that branch, now the current one.
            **self.sessions.on_branch(session_id, None),
            **self.ratings.target(None, view.query, enabled=True),
            **self.compare.done(payload or {}),
        }

    def _abandoned(
        self,
        chat: list[Any],
        ids: dict[int, str],
        user: gr.ChatMessage,
        view: render.TurnView,
        question: str,
    ) -> Updates:
        """A turn that ended before its answer: kept on screen, marked, never rated."""
        turn_chat = [*chat, user, *view.messages()]
        return {
            self.conversation.chatbot: turn_chat,
            self.state.chat_msgs: turn_chat,
            self.state.query_ids: {**ids, len(chat): ""},  # a turn with no record
            self.question: question,
            self.banner: gr.update(value="", visible=False),
            self.stop_btn: gr.update(value="Stop", interactive=False),
            **self.ratings.enabled(any(ids.values())),
        }
