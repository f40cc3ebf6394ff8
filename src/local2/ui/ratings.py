"""Ratings in the app: a person's 1-5 for an answer becomes ``user.feedback`` and a reward."""

from __future__ import annotations

from typing import Any

import gradio as gr

from local2.agent import UnknownTurn
from local2.ui import render
from local2.ui.base import UIPart, table

RATINGS = ["1", "2", "3", "4", "5"]


class Ratings(UIPart):
    """The rating controls under the chat and on each answer."""

    def _rating_row(self) -> None:
        with gr.Row(elem_id="local2-rating"):
            self.rating = gr.Radio(
                RATINGS,
                label="Rate the last answer (1 = bad, 5 = good)",
                scale=3,
                elem_id="local2-rating-choice",
            )
            self.rate = gr.Button("Record rating", scale=1, elem_id="local2-rate")
        self.reward_md = gr.Markdown("", elem_id="local2-reward")

    def _wire_ratings(self) -> None:
        self.rate.click(
            self.rate_last,
            [self.rating, self.session_id, self.query_ids],
            [self.reward_md, self.events_df, self.banner],
        )
        self.chatbot.like(
            self.rate_message,
            [self.session_id, self.chat_msgs, self.query_ids],
            [self.reward_md, self.events_df, self.banner],
        )

    def _record(self, session_id: str | None, query_id: str | None, rating: int) -> dict:
        if not session_id or not query_id:
            return {
                self.banner: gr.update(
                    value=render.banner("There is no answer to rate yet.", kind="info"),
                    visible=True,
                )
            }
        try:
            result = self.agent.feedback(session_id, query_id, rating)
        except (UnknownTurn, ValueError) as exc:
            return {
                self.banner: gr.update(
                    value=render.banner(str(exc).strip("'\""), kind="warning"), visible=True
                )
            }
        state = self.agent.state(session_id)
        annotated = result["engrams_annotated"]
        return {
            self.reward_md: (
                f"Recorded reward **{rating}/5** for turn `{query_id}` "
                f"(`user.feedback` → `reward.event`; {annotated} memory engram(s) annotated)."
            ),
            self.events_df: table(
                render.EVENT_COLUMNS, render.event_rows(state.get("event_log") or [])
            ),
            self.banner: gr.update(value="", visible=False),
        }

    def rate_last(
        self, rating: str | None, session_id: str | None, ids: dict[int, str] | None
    ) -> dict:
        if not rating:
            return {
                self.banner: gr.update(
                    value=render.banner("Pick a rating from 1 to 5 first.", kind="info"),
                    visible=True,
                )
            }
        last = ids[max(ids)] if ids else None
        return self._record(session_id, last, int(rating))

    def rate_message(
        self,
        session_id: str | None,
        chat: list[Any],
        ids: dict[int, str] | None,
        like: gr.LikeData,
    ) -> dict:
        """A rating picked on one answer's feedback menu: find that answer's turn."""
        if not isinstance(like.liked, str) or like.liked not in RATINGS:
            return {}
        index = like.index[0] if isinstance(like.index, list | tuple) else like.index
        starts = [i for i in sorted(ids or {}) if i <= int(index)]
        query_id = (ids or {}).get(starts[-1]) if starts else None
        return self._record(session_id, query_id, int(like.liked))
