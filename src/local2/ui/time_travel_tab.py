"""The time-travel tab: a session's turns, each with its question; fork or replay one.

Only the signed-in person's sessions (an admin may look at anyone's, each look noted, but
replays and forks only their own); someone else's id is as unknown as one that never was.

The person picks a *turn* (its question and the answer it got, in the "Original branch"
pane); **Fork this question** asks it again, edited, from just before that turn, and
**Replay this turn** runs it again as it was. The graph's own checkpoints (``receive``,
``generate``, ...) are in a details section, where the state at each can be inspected and a
replay started from any of them. A rerun streams like a normal turn (thinking, tool cards,
answer, grade) into the "New branch" pane. The Chat tab is left on the branch the person was
on; it offers to switch (see :mod:`local2.ui.sessions`). The panes show one session: loading
another (or opening the tab after the Chat tab moved to another) clears them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gradio as gr

from local2.contracts import CheckpointTurn
from local2.errors import InvalidId, Local2Error, NotFound
from local2.ids import check_session_id
from local2.service import Agent
from local2.ui import render, turn_list
from local2.ui.base import UIPart, reading_table, table
from local2.ui.notices import notice_for
from local2.ui.session_panel import SessionPanel
from local2.ui.session_state import SessionState
from local2.ui.timetravel_details import CHECKPOINTS_READ, TurnDetails
from local2.ui.timetravel_reruns import Reruns
from local2.ui.updates import Updates

INTRO = (
    "Every question of a session is a **turn** below. Pick one to see its question and the "
    "answer it got. To ask it differently, edit the question and press **Fork this "
    "question**: a new branch runs from just before that turn and streams beside the "
    "original, which stays as it was. **Replay this turn** runs the same question again (the "
    "model, its tools and the grade run anew)."
)

BRANCHES = (
    "_Branch: **current** is the branch the session goes on from; **other** is one a fork or "
    "replay left as it was (still listed, still forkable); **stopped** never answered._"
)


class TimeTravelTab(UIPart):
    """A session's turns, each with its question: fork one with an edited question, replay
    it (:class:`~local2.ui.timetravel_reruns.Reruns`), or inspect and replay from any of its
    checkpoints (:class:`~local2.ui.timetravel_details.TurnDetails`).

    A rerun in the Chat tab's session keeps that tab on its branch (``sessions`` says so)."""

    title = "Time travel"
    tab_id = "time-travel"

    def __init__(self, agent: Agent, state: SessionState, sessions: SessionPanel) -> None:
        super().__init__(agent)
        self.state = state
        self.sessions = sessions
        self.details = TurnDetails(agent)
        self.reruns = Reruns(agent, self)

    @property
    def loaded(self) -> list[Any]:
        """What :meth:`load_checkpoints` draws."""
        return [
            self.tt_turns,
            self.tt_turn,
            self.tt_turn_ids,
            self.tt_shown,
            self.tt_status,
            *self.turn_view,
            self.tt_new,
            self.tt_new_note,
        ]

    @property
    def turn_view(self) -> list[Any]:
        """What :meth:`show_turn` draws: the picked turn and its checkpoints."""
        details = self.details
        return [
            self.tt_original,
            self.tt_edit,
            details.tt_checkpoints,
            details.tt_pick,
            details.tt_state,
        ]

    def build(self, item: gr.Tab) -> None:
        self.item = item
        gr.Markdown(INTRO)
        self.tt_shown = gr.State("")  # the session the panes below show
        self.tt_turn_ids = gr.State([])  # the turns table's ids, row by row
        with gr.Row():
            self.tt_session = gr.Textbox(label="Session id", scale=4, elem_id="tt-session")
            self.tt_load = gr.Button("Load turns", scale=1, elem_id="tt-load")
        self.tt_status = gr.Markdown("", elem_id="tt-status")
        self._build_picker()
        self._build_panes()
        self.details.build(self.tt_status)

    def _build_picker(self) -> None:
        """The turns, the one picked, its question to edit, and what to do with it."""
        self.tt_turns = reading_table(
            turn_list.TURN_COLUMNS,
            "tt-turns",
            max_height=340,
            column_widths=["120px", "380px", "560px", "150px"],
        )
        gr.Markdown(BRANCHES, elem_id="tt-branches")
        self.tt_turn = gr.Dropdown(
            choices=[], label="Turn (pick one here, or click its row above)", elem_id="tt-turn"
        )
        with gr.Row():
            self.tt_edit = gr.Textbox(
                label="Its question (edit it, then fork)", scale=4, elem_id="tt-edit"
            )
            with gr.Column(scale=1):
                self.tt_fork = gr.Button("Fork this question", variant="primary", elem_id="tt-fork")
                self.tt_replay = gr.Button("Replay this turn", elem_id="tt-replay")

    def _build_panes(self) -> None:
        """The picked turn as it was, beside the new branch a rerun streams into."""
        with gr.Row():
            with gr.Column(min_width=300):
                gr.Markdown("#### Original branch")
                self.tt_original = gr.Markdown("", elem_id="tt-original")
            with gr.Column(min_width=300):
                gr.Markdown("#### New branch")
                self.tt_new = gr.Chatbot(
                    label="New branch",
                    show_label=False,
                    height=420,
                    elem_id="tt-new",
                    placeholder="A fork or replay streams here.",
                    buttons=["copy"],
                )
                self.tt_new_note = gr.Markdown("", elem_id="tt-new-note")

    def wire(self, demo: gr.Blocks) -> None:
        limit = self.settings.concurrency_limit
        loading = [self.tt_session, self.tt_shown, self.tt_turn]
        self.tt_load.click(self.load_checkpoints, loading, self.loaded)
        # Opening the tab shows the Chat tab's session as it is now (it may have moved on).
        self.item.select(self.load_checkpoints, loading, self.loaded)
        # Only a person's pick redraws the turn (``input``, not ``change``): a load draws it
        # itself, and a second redraw would overwrite a question being edited.
        picked = [self.tt_turn, *self.turn_view, self.tt_status]
        self.tt_turns.select(self.pick_turn_row, [self.tt_session, self.tt_turn_ids], picked)
        self.tt_turn.input(self.show_turn, [self.tt_session, self.tt_turn], picked[1:])
        self.details.wire(self.tt_session)
        reruns, outputs = self.reruns, self.reruns.outputs()
        current = [self.state.session_id, self.state.branch]  # what the Chat tab shows
        edited = [self.tt_session, self.tt_turn, self.tt_edit, *current]
        self.tt_fork.click(reruns.fork, edited, outputs, concurrency_limit=limit)
        turn = [self.tt_session, self.tt_turn, *current]
        self.tt_replay.click(reruns.replay, turn, outputs, concurrency_limit=limit)
        step = [self.tt_session, self.details.tt_pick, self.tt_turn, *current]
        self.details.tt_replay_step.click(
            reruns.replay_step, step, outputs, concurrency_limit=limit
        )

    # -- the session's turns ----------------------------------------------------------------

    def tt_error(self, message: str) -> str:
        """A problem the person can fix, as the status line shows it."""
        return render.banner(message, kind="warning")

    def _cleared(self, status: str) -> Updates:
        """Nothing shown: no session's turns, no panes (a session that has none, or an error)."""
        return {
            self.tt_turns: table(turn_list.TURN_COLUMNS, []),
            self.tt_turn: gr.update(choices=[], value=None),
            self.tt_turn_ids: [],
            self.tt_shown: "",
            self.tt_status: status,
            **self._no_turn(),
            self.tt_new: [],
            self.tt_new_note: "",
        }

    def _no_turn(self) -> Updates:
        return {self.tt_original: "", self.tt_edit: "", **self.details.cleared()}

    def turns(self, session_id: str) -> list[CheckpointTurn]:
        """The session's turns (``agent.sessions.checkpoint_turns``), in the conversation's
        order."""
        return self.agent.sessions.checkpoint_turns(session_id, limit=CHECKPOINTS_READ)

    def load_checkpoints(
        self,
        pasted: str | None,
        shown: str | None = None,
        picked: str | None = None,
        request: gr.Request | None = None,
    ) -> Updates:
        """A session's turns, newest on its current branch picked. The panes are kept when
        they already show this session (``shown``), and cleared when they showed another."""
        try:  # the request's one check: the service is handed the id checked
            session_id = check_session_id(pasted.strip()) if pasted and pasted.strip() else ""
        except InvalidId as exc:
            return self._cleared(self.tt_error(exc.message))
        try:
            if session_id:
                self.agent.access.read_session(self.person(request), session_id)
            turns = self.turns(session_id) if session_id else []
        except NotFound:  # unknown, or someone else's: the same
            turns = []
        except Local2Error as exc:  # signed out
            return self._cleared(notice_for(exc).markdown())
        if not turns:
            where = f" in session {session_id}" if session_id else ""
            return self._cleared(
                self.tt_error(
                    f"No turns{where} yet: ask something in the Chat tab, or paste the id of "
                    "another session."
                )
            )
        ids = [t["turn_id"] for t in turns]
        same = bool(session_id) and session_id == shown
        keep = picked if same and picked in ids else turn_list.default_pick(turns)
        out: Updates = {
            self.tt_turns: table(turn_list.TURN_COLUMNS, turn_list.rows(turns)),
            self.tt_turn: gr.update(choices=turn_list.choices(turns), value=keep),
            self.tt_turn_ids: ids,
            self.tt_shown: session_id,
            self.tt_status: f"{len(turns)} turn(s) in session `{session_id}`. Pick a turn to "
            "fork or replay it.",
        }
        if not same:  # another session: nothing of the last one's stays on screen
            chosen = next(t for t in turns if t["turn_id"] == keep)
            out.update(self._turn_view(session_id, chosen))
            out.update({self.tt_new: [], self.tt_new_note: ""})
        return out

    def pick_turn_row(
        self,
        session_id: str | None,
        ids: Sequence[str] | None,
        selected: gr.SelectData,
        request: gr.Request | None = None,
    ) -> Updates:
        """Clicking a row of the turns table picks that turn."""
        row = selected.index[0] if isinstance(selected.index, list | tuple) else selected.index
        if not ids or not isinstance(row, int) or not 0 <= row < len(ids):
            return {}
        return {self.tt_turn: ids[row], **self.show_turn(session_id, ids[row], request)}

    def _turn_view(self, session_id: str, turn: CheckpointTurn) -> Updates:
        """The picked turn: its own question and answer, and its checkpoints (details)."""
        return {
            self.tt_original: turn_list.pane(turn),
            self.tt_edit: turn["question"],
            **self.details.steps(session_id, turn),
        }

    def find(self, session_id: str, turn_id: str) -> CheckpointTurn:
        """One of the session's turns; :class:`~local2.errors.NotFound` when it has none such."""
        found = next((t for t in self.turns(session_id) if t["turn_id"] == turn_id), None)
        if found is None:
            raise NotFound(f"No turn '{turn_id}' in session '{session_id}'")
        return found

    def show_turn(
        self, session_id: str | None, turn_id: str | None, request: gr.Request | None = None
    ) -> Updates:
        if not session_id or not turn_id:
            return self._no_turn()
        try:
            self.agent.access.read_session(self.person(request), session_id)
            turn = self.find(session_id, turn_id)
        except Local2Error as exc:
            return {**self._no_turn(), self.tt_status: notice_for(exc).markdown()}
        return self._turn_view(session_id, turn)
