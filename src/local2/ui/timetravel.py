"""The time-travel tab: a session's checkpoints, the state at one, replay and fork.

Only the signed-in person's sessions (an admin may look at anyone's, each look noted, but
replays and forks only their own); someone else's id is as unknown as one that never was.

A replay or fork streams like a normal turn (thinking, tool cards, answer, grade) into the
"New branch" panel. The Chat tab is left on the branch the person was on; it offers to
switch (see :mod:`local2.ui.sessions`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import gradio as gr

from local2.errors import InvalidId, InvalidInput, Local2Error, NotFound, TurnCancelled
from local2.ids import check_session_id
from local2.service import Agent
from local2.ui import render
from local2.ui.base import UIPart, live, table
from local2.ui.notices import Notice, notice_for
from local2.ui.safe_markdown import neutralise
from local2.ui.session_panel import SessionPanel
from local2.ui.session_state import SessionState
from local2.ui.updates import Updates


class TimeTravel(UIPart):
    """Inspect any past step of a session; replay it or fork it with an edited question.

    A rerun in the Chat tab's session keeps that tab on its branch (``sessions`` says so)."""

    title = "Time travel"
    tab_id = "time-travel"

    def __init__(self, agent: Agent, state: SessionState, sessions: SessionPanel) -> None:
        super().__init__(agent)
        self.state = state
        self.sessions = sessions

    @property
    def loaded(self) -> list[Any]:
        """What :meth:`load_checkpoints` draws, in its order."""
        return [self.tt_table, self.tt_pick, self.tt_status]

    def build(self, item: gr.Tab) -> None:
        gr.Markdown(
            "Pick a session, load its checkpoints (newest first), inspect the state at one, "
            "then replay from it or fork it with an edited question. The original branch stays "
            "intact; the new one appears beside it."
        )
        with gr.Row():
            self.tt_session = gr.Textbox(label="Session id", scale=4, elem_id="tt-session")
            self.tt_load = gr.Button("Load checkpoints", scale=1, elem_id="tt-load")
        self.tt_status = gr.Markdown("", elem_id="tt-status")
        self.tt_table = gr.Dataframe(
            value=table(render.CHECKPOINT_COLUMNS, []),
            interactive=False,
            wrap=True,
            max_height=320,
            column_widths=["250px", "60px", "120px", "150px", "120px", "280px", "120px"],
            elem_id="tt-checkpoints",
        )
        self.tt_pick = gr.Dropdown(choices=[], label="Checkpoint", elem_id="tt-pick")
        with gr.Accordion("State at this checkpoint", open=False):
            self.tt_state = gr.JSON(value={}, elem_id="tt-state")
        with gr.Row():
            self.tt_edit = gr.Textbox(
                label="Edited question (for a fork)", scale=4, elem_id="tt-edit"
            )
            with gr.Column(scale=1):
                self.tt_replay = gr.Button("Replay from here", elem_id="tt-replay")
                self.tt_fork = gr.Button(
                    "Fork with edited question", variant="primary", elem_id="tt-fork"
                )
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
                    placeholder="A replay or fork streams here.",
                    buttons=["copy"],
                )
                self.tt_new_note = gr.Markdown("", elem_id="tt-new-note")

    def wire(self, demo: gr.Blocks) -> None:
        limit = self.settings.concurrency_limit
        self.tt_load.click(self.load_checkpoints, [self.tt_session], self.loaded)
        self.tt_table.select(self.pick_row, None, [self.tt_pick])
        self.tt_pick.change(
            self.show_checkpoint,
            [self.tt_session, self.tt_pick],
            [self.tt_state, self.tt_original, self.tt_edit, self.tt_status],
        )
        tt_outputs = [
            self.tt_new,
            self.tt_new_note,
            self.tt_table,
            self.tt_pick,
            self.tt_status,
            *self.sessions.branch_outputs(),
        ]
        current = [self.state.session_id, self.state.branch]  # what the Chat tab shows
        self.tt_replay.click(
            self.replay,
            [self.tt_session, self.tt_pick, *current],
            tt_outputs,
            concurrency_limit=limit,
        )
        self.tt_fork.click(
            self.fork,
            [self.tt_session, self.tt_pick, self.tt_edit, *current],
            tt_outputs,
            concurrency_limit=limit,
        )

    def _rerun_failed(self, user: gr.ChatMessage, view: render.TurnView, said: Notice) -> Updates:
        view.fail(said.text)
        return {self.tt_new: [user, *view.messages()], self.tt_status: said.markdown()}

    def _tt_error(self, message: str) -> str:
        return render.banner(message, kind="warning")

    def load_checkpoints(
        self, pasted: str | None, request: gr.Request | None = None
    ) -> tuple[Any, ...]:
        try:  # the request's one check: the service is handed the id checked
            session_id = check_session_id(pasted.strip()) if pasted and pasted.strip() else ""
        except InvalidId as exc:
            empty = table(render.CHECKPOINT_COLUMNS, [])
            return empty, gr.update(choices=[], value=None), self._tt_error(exc.message)
        try:
            if session_id:
                self.agent.access.read_session(self.person(request), session_id)
            rows = self.agent.checkpoints(session_id, limit=200) if session_id else []
        except NotFound:  # unknown, or someone else's: the same
            rows = []
        except Local2Error as exc:  # signed out
            empty = table(render.CHECKPOINT_COLUMNS, [])
            return empty, gr.update(choices=[], value=None), notice_for(exc).markdown()
        if not rows:
            message = "No checkpoints: ask something first, or paste a session id."
            return (
                table(render.CHECKPOINT_COLUMNS, []),
                gr.update(choices=[], value=None),
                self._tt_error(message),
            )
        return (
            table(render.CHECKPOINT_COLUMNS, render.checkpoint_rows(rows)),
            gr.update(choices=render.checkpoint_choices(rows), value=None),
            f"{len(rows)} checkpoint(s) in session `{session_id}`.",
        )

    @staticmethod
    def pick_row(selected: gr.SelectData) -> Any:
        """Clicking a row of the checkpoint table picks that checkpoint."""
        row = selected.row_value or []
        return gr.update(value=row[0]) if row else gr.update()

    def show_checkpoint(
        self,
        session_id: str | None,
        checkpoint_id: str | None,
        request: gr.Request | None = None,
    ) -> tuple[Any, ...]:
        if not session_id or not checkpoint_id:
            return {}, "", gr.update(), ""
        try:
            self.agent.access.read_session(self.person(request), session_id)
            state = self.agent.state(session_id, checkpoint_id)
        except Local2Error as exc:
            return {}, "", gr.update(), notice_for(exc).markdown()
        question, answer = self._original(session_id, checkpoint_id, state)
        original = f"**Question:** {neutralise(question)}\n\n**Answer:** {neutralise(answer)}"
        return render.state_view(state), original, question, ""

    def _original(
        self, session_id: str, checkpoint_id: str, state: Mapping[str, Any]
    ) -> tuple[str, str]:
        """The question at a checkpoint and the answer its branch went on to give."""
        question = str(state.get("query") or "")
        if state.get("answer"):
            return question, str(state["answer"])
        rows = self.agent.checkpoints(session_id, limit=1000)
        parent = {r["checkpoint_id"]: r.get("parent_id") for r in rows}
        for row in rows:  # newest first: the latest descendant that ended a turn
            if row["next"] or row.get("query_id") != state.get("query_id"):
                continue
            node: str | None = row["checkpoint_id"]
            while node and node != checkpoint_id:
                node = parent.get(node)
            if node == checkpoint_id:
                full = self.agent.state(session_id, row["checkpoint_id"])
                return question, str(full.get("answer") or "")
        return question, "(no answer on this branch yet)"

    def replay(
        self,
        session_id: str,
        checkpoint_id: str | None,
        current: str | None,
        branch: str | None = None,
        request: gr.Request | None = None,
    ) -> Iterator[Updates]:
        yield from self._rerun(session_id, checkpoint_id, None, current, branch, request)

    def fork(
        self,
        session_id: str,
        checkpoint_id: str | None,
        edited: str,
        current: str | None,
        branch: str | None = None,
        request: gr.Request | None = None,
    ) -> Iterator[Updates]:
        yield from self._rerun(session_id, checkpoint_id, edited or "", current, branch, request)

    def _rerun(
        self,
        session_id: str,
        checkpoint_id: str | None,
        query: str | None,
        current: str | None,
        branch: str | None,
        request: gr.Request | None = None,
    ) -> Iterator[Updates]:
        """Stream a replay (``query`` None) or fork into the New branch panel (the owner's
        session only).

        ``current``/``branch``: the Chat tab's session and branch. When the rerun is in that
        session, the Chat tab stays on the branch it showed and offers to switch.
        """
        session_id = (session_id or "").strip()
        if not session_id or not checkpoint_id:
            yield {self.tt_status: self._tt_error("Load a session's checkpoints and pick one.")}
            return
        try:
            self.agent.access.write_session(self.person(request), session_id)
            state = self.agent.state(session_id, checkpoint_id)
        except Local2Error as exc:
            yield {self.tt_status: notice_for(exc).markdown()}
            return
        question = query if query is not None else str(state.get("query") or "")
        stay_on = branch
        if session_id == current and branch is None:
            stay_on = self.agent.head_id(session_id)  # what the Chat tab shows right now
        user = gr.ChatMessage(role="user", content=neutralise(question))
        view = render.TurnView(question)
        verb = "Forked" if query is not None else "Replayed"
        yield {self.tt_new: [user], self.tt_new_note: "", self.tt_status: f"{verb[:-2]}ing…"}
        try:
            for _ in live(self.agent.replay_stream(session_id, checkpoint_id, query=query), view):
                yield {self.tt_new: [user, *view.messages()]}
        except (Local2Error, TurnCancelled) as exc:  # a Stop: pressed in the Chat tab
            said = notice_for(exc)
            if isinstance(exc, InvalidInput | NotFound):  # refused before anything ran
                yield {self.tt_status: said.markdown()}
            else:
                yield self._rerun_failed(user, view, said)
            return
        yield self._rerun_done(session_id, checkpoint_id, verb, user, view, current, stay_on)

    def _rerun_done(
        self,
        session_id: str,
        checkpoint_id: str,
        verb: str,
        user: gr.ChatMessage,
        view: render.TurnView,
        current: str | None,
        stay_on: str | None,
    ) -> dict[Any, Any]:
        """The panels once a rerun has streamed: its new checkpoints marked in the list, a
        note when it paused for approval, and the Chat tab kept on ``stay_on``."""
        payload = view.payload
        new_ids = set((payload.get("branch") if payload else None) or [])
        rows = self.agent.checkpoints(session_id, limit=200)
        out: dict[Any, Any] = {
            self.tt_new: [user, *view.messages()],
            self.tt_new_note: f"_{verb} from `{checkpoint_id}`: {len(new_ids)} new "
            "checkpoint(s), marked “new” in the list._",
            self.tt_table: table(
                render.CHECKPOINT_COLUMNS, render.checkpoint_rows(rows, frozenset(new_ids))
            ),
            self.tt_pick: gr.update(choices=render.checkpoint_choices(rows)),
            self.tt_status: f"{verb}: the new branch is now the session's current branch.",
        }
        if payload and payload.get("status") == "awaiting_approval":
            approval = payload.get("approval")
            tools = ", ".join(c["tool"] for c in (approval["calls"] if approval else []))
            out[self.tt_new_note] += (
                f"\n\n**Paused: {tools} waits for your approval.** Approve or deny it in the "
                "Chat tab (switch to the new branch, or resume this session there)."
            )
        if session_id == current and stay_on:
            out[self.tt_status] += " The Chat tab stays on the branch you were on until you switch."
            out.update(self.sessions.on_branch(session_id, stay_on))
        return out
