"""The Arena tab: which model answers this person's questions best (docs/architecture.md, "A turn's
path").

Two tables, from the votes of compared turns: the person's preferences and the judge's
verdicts, each a Bradley-Terry rating per model with its 95% interval and vote counts
(:mod:`local2.arena._ratings`), and both as CSV or JSON downloads. With people configured,
the votes are those of the signed-in person's sessions only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr

from local2.arena import arena, as_csv, as_json
from local2.errors import Local2Error
from local2.memory import owner_folder
from local2.storage import private_dir, write_private
from local2.ui._base import UIPart, table
from local2.ui._notices import notice_for
from local2.ui._updates import Updates

DOWNLOADS = "downloads"  # under the data directory, a folder per person
COLUMNS = ["model", "rating", "95% interval", "votes", "wins", "losses", "ties"]
EXPLAINED = (
    "Every compared turn (**Compare with a second model** in the Chat tab) is a game: the "
    "judge votes when it grades the pair (asked twice with the order swapped; a disagreement "
    "is a tie), you vote with *A is better / Tie / B is better*. Ratings are Bradley-Terry "
    "on an Elo-like scale (mean 1000; 400 points = 10:1 odds), ties half a win."
)


JUDGE_OFF = "Not graded: the critic is off, so the judge casts no votes."
SAME_MODEL = (
    "{n} compared a model with itself, which rates no model: pick another Model B to "
    "rate two models."
)


def summary_of(votes: list[Any]) -> str:
    """How many votes there are, by whom, and how many rate nothing (a model against itself)."""
    if not votes:
        return "No votes yet: compare two models in the Chat tab."
    people = sum(v.voter == "person" for v in votes)
    said = f"{people} vote(s) from people, {len(votes) - people} from the judge."
    same = sum(v.model_a == v.model_b for v in votes)
    return f"{said} {SAME_MODEL.format(n=same)}" if same else said


def rows(ratings: list[Any]) -> list[list[Any]]:
    return [
        [
            r.model,
            round(r.rating),
            f"{r.ci_low:.0f}–{r.ci_high:.0f}",
            r.votes,
            r.wins,
            r.losses,
            r.ties,
        ]
        for r in ratings
    ]


class ArenaTab(UIPart):
    """The Arena tab: the ratings of the person's votes and the judge's, and their downloads."""

    title = "Arena"
    tab_id = "arena"

    def build(self, item: gr.Tab) -> None:
        self.item = item  # choosing the tab redraws it
        gr.Markdown(EXPLAINED, elem_id="arena-about")
        self.refresh = gr.Button("Refresh", size="sm", elem_id="arena-refresh")
        self.summary_md = gr.Markdown("", elem_id="arena-summary")
        gr.Markdown("#### People's votes")
        self.people_df = gr.Dataframe(
            value=table(COLUMNS, []), interactive=False, elem_id="arena-people"
        )
        judge_off = "" if self.agent.info.critic else f"\n\n_{JUDGE_OFF}_"
        gr.Markdown(f"#### The judge's votes{judge_off}", elem_id="arena-judge-about")
        self.judge_df = gr.Dataframe(
            value=table(COLUMNS, []), interactive=False, elem_id="arena-judge"
        )
        with gr.Row():
            self.csv_btn = gr.DownloadButton("Download CSV", size="sm", elem_id="arena-csv")
            self.json_btn = gr.DownloadButton("Download JSON", size="sm", elem_id="arena-json")

    def wire(self, demo: gr.Blocks) -> None:
        outputs = [self.summary_md, self.people_df, self.judge_df, self.csv_btn, self.json_btn]
        self.refresh.click(self.arena_view, None, outputs)
        self.item.select(self.arena_view, None, outputs)

    def arena_view(self, request: gr.Request | None = None) -> Updates:
        try:
            person = self.person(request)
        except Local2Error as exc:
            return {self.summary_md: notice_for(exc).markdown()}
        votes = self.agent.votes.own(person)
        ratings = arena(votes)
        # A folder of the person's own under the data directory (0700, files 0600), never a
        # temp folder the machine's users share; two people's downloads never meet.
        downloads = private_dir(Path(self.agent.settings.data_dir) / DOWNLOADS)
        folder = private_dir(downloads / owner_folder(person.name))
        csv_file = write_private(folder / "arena.csv", as_csv(ratings))
        json_file = write_private(folder / "arena.json", as_json(ratings, votes))
        return {
            self.summary_md: summary_of(votes),
            self.people_df: table(COLUMNS, rows(ratings["people"])),
            self.judge_df: table(COLUMNS, rows(ratings["judge"])),
            self.csv_btn: str(csv_file),
            self.json_btn: str(json_file),
        }
