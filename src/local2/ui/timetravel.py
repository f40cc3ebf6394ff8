"""The time-travel tab: a session's checkpoints, the state at one, replay and fork."""

from __future__ import annotations

from typing import Any

import gradio as gr

from local2.agent import InvalidQuery, UnknownTurn
from local2.models.errors import ModelError
from local2.ui import render
from local2.ui.base import UIPart, table


class TimeTravel(UIPart):
    """Inspect any past step of a session; replay it or fork it with an edited question."""

    def _time_travel_tab(self) -> None:
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
            column_widths=["24%", "6%", "11%", "13%", "12%", "28%", "6%"],
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
            with gr.Column():
                gr.Markdown("#### Original branch")
                self.tt_original = gr.Markdown("", elem_id="tt-original")
            with gr.Column():
                gr.Markdown("#### New branch")
                self.tt_new = gr.Markdown("", elem_id="tt-new")

    def _wire_time_travel(self) -> None:
        limit = self.settings.concurrency_limit
        self.tt_load.click(
            self.load_checkpoints, [self.tt_session], [self.tt_table, self.tt_pick, self.tt_status]
        )
        self.tt_table.select(self.pick_row, None, [self.tt_pick])
        self.tt_pick.change(
            self.show_checkpoint,
            [self.tt_session, self.tt_pick],
            [self.tt_state, self.tt_original, self.tt_edit, self.tt_status],
        )
        tt_outputs = [
            self.tt_new,
            self.tt_table,
            self.tt_pick,
            self.tt_status,
            self.chatbot,
            self.chat_msgs,
            self.query_ids,
        ]
        self.tt_replay.click(
            self.replay,
            [self.tt_session, self.tt_pick, self.session_id],
            tt_outputs,
            concurrency_limit=limit,
        )
        self.tt_fork.click(
            self.fork,
            [self.tt_session, self.tt_pick, self.tt_edit, self.session_id],
            tt_outputs,
            concurrency_limit=limit,
        )

    def _tt_error(self, message: str) -> str:
        return render.banner(message, kind="warning")

    def load_checkpoints(self, session_id: str | None) -> tuple[Any, ...]:
        session_id = (session_id or "").strip()
        try:
            rows = self.agent.checkpoints(session_id, limit=200) if session_id else []
        except UnknownTurn:
            rows = []
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

    def show_checkpoint(self, session_id: str | None, checkpoint_id: str | None) -> tuple:
        if not session_id or not checkpoint_id:
            return {}, "", gr.update(), ""
        try:
            state = self.agent.state(session_id, checkpoint_id)
        except UnknownTurn as exc:
            return {}, "", gr.update(), self._tt_error(str(exc).strip("'\""))
        question, answer = self._original(session_id, checkpoint_id, state)
        original = f"**Question:** {question}\n\n**Answer:** {answer}"
        return render.state_view(state), original, question, ""

    def _original(
        self, session_id: str, checkpoint_id: str, state: dict[str, Any]
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

    def replay(self, session_id: str, checkpoint_id: str | None, current: str | None) -> dict:
        return self._rerun(session_id, checkpoint_id, None, current)

    def fork(
        self, session_id: str, checkpoint_id: str | None, edited: str, current: str | None
    ) -> dict:
        return self._rerun(session_id, checkpoint_id, edited or "", current)

    def _rerun(
        self,
        session_id: str,
        checkpoint_id: str | None,
        query: str | None,
        current: str | None,
    ) -> dict:
        session_id = (session_id or "").strip()
        if not session_id or not checkpoint_id:
            return {self.tt_status: self._tt_error("Load a session's checkpoints and pick one.")}
        try:
            payload = self.agent.replay(session_id, checkpoint_id, query=query)
        except (UnknownTurn, InvalidQuery) as exc:
            return {self.tt_status: self._tt_error(str(exc).strip("'\""))}
        except ModelError as exc:
            return {self.tt_status: render.banner(exc.message, exc.fix)}
        branch = set(payload.get("branch") or [])
        rows = self.agent.checkpoints(session_id, limit=200)
        verb = "Forked" if query is not None else "Replayed"
        new = (
            f"**Question:** {payload.get('query')}\n\n**Answer:** {payload.get('answer')}\n\n"
            f"{render.critique_text(payload.get('critique'))}\n\n"
            f"_{verb} from `{checkpoint_id}`: {len(branch)} new checkpoint(s), marked "
            f"“new” in the list._"
        )
        out: dict[Any, Any] = {
            self.tt_new: new,
            self.tt_table: table(
                render.CHECKPOINT_COLUMNS, render.checkpoint_rows(rows, frozenset(branch))
            ),
            self.tt_pick: gr.update(choices=render.checkpoint_choices(rows)),
            self.tt_status: f"{verb}: the session now continues from the new branch.",
        }
        if session_id == current:
            chat, ids = self._history_chat(session_id)
            out.update({self.chatbot: chat, self.chat_msgs: chat, self.query_ids: ids})
        return out
