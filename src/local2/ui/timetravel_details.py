"""Time travel's details: the picked turn's checkpoints, one per step of the graph
(``receive``, ``generate``, ...), the state at one, and a replay from it.

A person picks a turn by its question (:mod:`local2.ui.time_travel_tab`); the graph's own steps
are here, folded away, for who wants to look inside.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from local2.contracts import CheckpointTurn
from local2.errors import Local2Error
from local2.ui import render
from local2.ui.base import UIPart, reading_table, table
from local2.ui.notices import notice_for
from local2.ui.updates import Updates

CHECKPOINTS_READ = 1000  # the newest checkpoints of a session that time travel groups
ABOUT = (
    "A checkpoint is saved after each step of the graph (`receive`, `generate`, `publish`, "
    "...). Pick one to inspect the state there, or replay from it: the steps after it run again."
)


class TurnDetails(UIPart):
    """The details section: a turn's checkpoints, the state at one, a replay from one."""

    def build(self, status: gr.Markdown) -> None:
        """Lay it out; ``status`` is the tab's status line, where a problem shows."""
        self.tt_status = status
        with gr.Accordion(
            "Details: this turn's checkpoints (the graph's internal steps)",
            open=False,
            elem_id="tt-details",
        ):
            gr.Markdown(ABOUT)
            self.tt_checkpoints = reading_table(
                render.CHECKPOINT_COLUMNS,
                "tt-checkpoints",
                max_height=320,
                column_widths=["250px", "60px", "120px", "150px", "120px", "280px", "120px"],
            )
            with gr.Row():
                self.tt_pick = gr.Dropdown(
                    choices=[], label="Checkpoint", scale=4, elem_id="tt-pick"
                )
                self.tt_replay_step = gr.Button(
                    "Replay from this checkpoint", scale=1, elem_id="tt-replay-step"
                )
            self.tt_state = gr.JSON(value={}, label="State at this checkpoint", elem_id="tt-state")

    def wire(self, session: gr.Textbox) -> None:
        self.tt_checkpoints.select(self.pick_row, None, [self.tt_pick])
        outputs = [self.tt_state, self.tt_status]
        self.tt_pick.change(self.show_checkpoint, [session, self.tt_pick], outputs)

    def cleared(self) -> Updates:
        return {
            self.tt_checkpoints: table(render.CHECKPOINT_COLUMNS, []),
            self.tt_pick: gr.update(choices=[], value=None),
            self.tt_state: {},
        }

    def steps(self, session_id: str, turn: CheckpointTurn, picked: str | None = None) -> Updates:
        """The turn's checkpoints, ``picked`` kept picked (and the state shown cleared unless
        one is)."""
        mine = set(turn["checkpoints"])
        rows = [
            r
            for r in self.agent.sessions.checkpoints(session_id, limit=CHECKPOINTS_READ)
            if r["checkpoint_id"] in mine
        ]
        out: Updates = {
            self.tt_checkpoints: table(render.CHECKPOINT_COLUMNS, render.checkpoint_rows(rows)),
            self.tt_pick: gr.update(
                choices=render.checkpoint_choices(rows), value=picked if picked in mine else None
            ),
        }
        if picked is None:
            out[self.tt_state] = {}
        return out

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
    ) -> Updates:
        """The state at one checkpoint."""
        if not session_id or not checkpoint_id:
            return {self.tt_state: {}}
        try:
            self.agent.access.read_session(self.person(request), session_id)
            state = self.agent.sessions.state(session_id, checkpoint_id)
        except Local2Error as exc:
            return {self.tt_state: {}, self.tt_status: notice_for(exc).markdown()}
        return {self.tt_state: render.state_view(state)}
