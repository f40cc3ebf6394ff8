"""The app's Evaluate tab: run a question set with a progress bar and the time left, stop it,
resume it (Stop shown only while a run is going, Resume only with a stopped, failed or interrupted
run picked); list the runs; chart accuracy with its 95 % interval per model, search provider
and mode; and open any question's session (in the Time travel tab, or a research run in
the Research tab).

Everything is the signed-in person's: the list shows only their runs, and someone else's
run id is as unknown as one that never was. A set is ``demo`` or one placed in
``<data dir>/eval-sets/``; the app never reads a path a browser sends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gradio as gr

from local2.contracts import Person
from local2.errors import Local2Error
from local2.evals import say_rate
from local2.ui.base import reading_table, table
from local2.ui.eval_chart import (
    QUESTION_COLUMNS,
    QUESTION_WIDTHS,
    RUN_COLUMNS,
    RUN_WIDTHS,
    accuracy_chart,
    grader_words,
    progress_bar,
    question_rows,
    run_rows,
    started,
)
from local2.ui.notices import notice_for
from local2.ui.research_steer import HIDE, shown
from local2.ui.sign_in import person_of

if TYPE_CHECKING:
    from gradio.components.plot import PlotData

    from local2.contracts import EvalItem, EvalProgress, EvalRunRow, Rate
    from local2.service import Agent
    from local2.ui.research_tab import ResearchTab
    from local2.ui.time_travel_tab import TimeTravelTab

RUN_LIST = 100
STOP_WAIT_S = 30.0  # how long Stop waits for the questions in flight to say how it ended
RESUMABLE = frozenset({"stopped", "failed", "interrupted"})  # a run that has questions left


@dataclass(frozen=True)
class Opens:
    """Where a question's session opens: the tabs, time travel's session box and what loads
    its checkpoints, and the Research tab's run picker."""

    tabs: gr.Tabs
    session: gr.Textbox
    load: Callable[..., Any]
    load_outputs: list[Any]
    research_run: gr.Dropdown


class EvaluateTab:
    """The Evaluate tab: builds its components (inside an open ``gr.Tab``) and wires its
    events as it lays them out. A question opens in ``time_travel`` (switching ``tabs``), a
    research run in ``research`` (laid out before this tab)."""

    title = "Evaluate"
    tab_id = "evaluate"

    def __init__(
        self, agent: Agent, tabs: gr.Tabs, time_travel: TimeTravelTab, research: ResearchTab
    ) -> None:
        self.agent = agent
        self.proxied = bool(agent.settings.server.trusted_user_header)
        self.tabs = tabs
        self.time_travel = time_travel
        self.research = research

    def person(self, request: gr.Request | None) -> Person:
        return person_of(self.agent.access, self.proxied, request)

    def build(self, item: gr.Tab) -> None:
        travel = self.time_travel
        opens = Opens(
            self.tabs, travel.tt_session, travel.load_checkpoints, travel.loaded, self.research.past
        )
        self._build_choices()
        self._build_controls()
        self._build_runs()
        self._wire(self.agent.settings.ui.concurrency_limit, opens, item)

    def wire(self, demo: gr.Blocks) -> None:
        """Nothing more: :meth:`build` wired it."""

    def _build_choices(self) -> None:
        """What to run: the set, the mode, how many questions and how many at once."""
        gr.Markdown(
            "Measure answers: run a question set through the chat turn (ask) or a research "
            "run, grade every answer against its gold answers, and read accuracy with its "
            "95 % interval. Sets: `demo` (shipped, offline) and those you put in the data "
            "folder's `eval-sets/`. Every question opens in its session."
        )
        with gr.Row():
            self.set_pick = gr.Dropdown(
                choices=self.agent.evals.sets(),
                value="demo",
                label="Question set",
                scale=3,
                elem_id="eval-set",
            )
            self.mode = gr.Radio(
                ["ask", "research"], value="ask", label="Mode", scale=2, elem_id="eval-mode"
            )
            self.limit = gr.Number(
                value=0,
                label="First N questions (0: all)",
                precision=0,
                minimum=0,
                scale=1,
                elem_id="eval-limit",
            )
            self.concurrency = gr.Slider(
                1, 8, value=1, step=1, label="At once", scale=1, elem_id="eval-concurrency"
            )

    def _build_controls(self) -> None:
        """Run, Stop and Resume, and the run's progress and status. Stop shows only while
        a run this browser follows is going, Resume only with a resumable run picked."""
        with gr.Row():
            self.run_btn = gr.Button("Run", variant="primary", elem_id="eval-run")
            self.stop_btn = gr.Button(
                "Stop", variant="stop", elem_id="eval-stop", elem_classes=[HIDE]
            )
            self.resume_btn = gr.Button(
                "Resume the picked run", elem_id="eval-resume", elem_classes=[HIDE]
            )
        self.running = gr.State("")  # the run this browser follows
        self.progress = gr.HTML("", elem_id="eval-progress")
        self.status = gr.Markdown("", elem_id="eval-status")

    def _build_runs(self) -> None:
        """The runs so far (charted and listed), and a picked run's questions."""
        with gr.Row():
            self.chart_set = gr.Dropdown(
                choices=[], label="Chart the runs of", scale=1, elem_id="eval-chart-set"
            )
            self.refresh = gr.Button("Refresh", scale=0, size="sm", elem_id="eval-refresh")
        self.chart = gr.Plot(label="Accuracy with 95 % intervals", elem_id="eval-chart")
        self.runs = reading_table(
            RUN_COLUMNS, "eval-runs", max_height=300, column_widths=RUN_WIDTHS
        )
        gr.Markdown("_Pick a run to see its questions._")
        self.pick = gr.Dropdown(choices=[], label="Run", elem_id="eval-pick")
        self.summary = gr.Markdown("", elem_id="eval-summary")
        self.questions = reading_table(
            QUESTION_COLUMNS, "eval-questions", max_height=520, column_widths=QUESTION_WIDTHS
        )
        gr.Markdown(
            "_Click a question to open its session in Time travel (a research run: picked "
            "under Past runs in the Research tab)._"
        )

    def _wire(self, limit: int, opens: Opens, tab: gr.Tab) -> None:
        listing = [self.runs, self.pick, self.chart_set, self.chart, self.set_pick]
        tab.select(self.list_runs, [self.chart_set], listing)
        # A run that ends is picked, its questions shown (no hunting for it in the list).
        following = [
            self.progress,
            self.status,
            self.running,
            *listing,
            self.summary,
            self.questions,
            self.stop_btn,
            self.resume_btn,
        ]
        self.run_btn.click(
            self.run,
            [self.set_pick, self.mode, self.limit, self.concurrency],
            following,
            concurrency_limit=limit,
        )
        self.resume_btn.click(
            self.resume, [self.pick, self.concurrency], following, concurrency_limit=limit
        )
        self.stop_btn.click(self.stop, [self.running], [self.status])
        self.refresh.click(self.list_runs, [self.chart_set], listing)
        self.chart_set.change(self.draw, [self.chart_set], [self.chart])
        self.pick.change(self.show, [self.pick], [self.summary, self.questions])
        self.pick.change(self.resumable, [self.pick], [self.resume_btn])
        targets = [opens.session, opens.tabs, opens.research_run]
        self.questions.select(self.open_question, [self.pick], targets).then(
            opens.load, [opens.session], opens.load_outputs
        )

    # -- running ---------------------------------------------------------------------------

    def run(
        self,
        set_name: str | None,
        mode: str | None,
        limit: float | None,
        concurrency: float | None,
        request: gr.Request | None = None,
    ) -> Iterator[dict[Any, Any]]:
        try:
            person = self.person(request)
            items = self.agent.evals.start(
                set_name or "",
                mode=mode or "ask",
                limit=int(limit) if limit else None,
                concurrency=int(concurrency or 1),
                person=person,
            )
        except Local2Error as exc:
            yield {self.status: notice_for(exc).markdown()}
            return
        yield from self._follow(items, person, request)

    def resume(
        self, run_id: str | None, concurrency: float | None, request: gr.Request | None = None
    ) -> Iterator[dict[Any, Any]]:
        try:
            person = self.person(request)
            items = self.agent.evals.resume(
                (run_id or "").strip(), concurrency=int(concurrency or 1), person=person
            )
        except Local2Error as exc:
            yield {self.status: notice_for(exc).markdown()}
            return
        yield from self._follow(items, person, request)

    def _follow(
        self, items: Iterator[EvalItem], person: Person, request: gr.Request | None
    ) -> Iterator[dict[Any, Any]]:
        run_id = ""
        last: EvalProgress | None = None  # the bar as it stood at the end
        try:
            for kind, data in items:
                if kind == "run":
                    run_id = data["run_id"]
                    judge = "graded by " + grader_words(
                        data["grader"], None, data["grader_is_answerer"]
                    )
                    yield {
                        self.running: run_id,
                        self.stop_btn: shown(True),
                        self.resume_btn: shown(False),
                        self.status: f"Run `{run_id}` · {data['set']} · {data['mode']} · "
                        f"{data['model']} ({data['backend']}) · {judge}",
                    }
                elif kind == "progress":
                    last = data
                    yield {self.progress: progress_bar(data)}
                elif kind == "final":
                    summary = data["summary"]
                    listing = self.list_runs(data["manifest"]["set"]["name"], request)
                    choices = listing[self.pick]["choices"]
                    picked, questions = self.show(run_id, request)
                    yield {  # the bar's counts stay; the status says how it ended, once
                        self.progress: progress_bar(last, finished=True),
                        self.status: f"Run `{run_id}` {data['status']}: "
                        f"{_accuracy(summary['accuracy'])}",
                        self.running: "",
                        **listing,
                        self.pick: gr.update(choices=choices, value=run_id),
                        self.summary: picked,
                        self.questions: questions,
                        self.stop_btn: shown(False),
                        self.resume_btn: shown(data["status"] in RESUMABLE),
                    }
        except Local2Error as exc:
            yield {
                self.status: f"{notice_for(exc).markdown()}  \nResume the run later: `{run_id}`.",
                self.running: "",
                self.stop_btn: shown(False),
            }

    def stop(self, run_id: str | None, request: gr.Request | None = None) -> str:
        if not run_id:
            return "No run of yours is going in this tab."
        try:
            stopped = self.agent.evals.stop(run_id, self.person(request))
        except Local2Error as exc:
            return notice_for(exc).markdown()
        if not stopped:
            return f"Run `{run_id}` is not going."
        # Wait for the questions in flight: this answer and the run's own last word land in
        # the same place in either order, so both say how the run ended.
        if self.agent.evals.wait_ended(run_id, STOP_WAIT_S):
            detail = self.agent.evals.show(run_id, self.person(request))
            accuracy = _accuracy(detail["summary"]["accuracy"])
            return f"Run `{run_id}` {detail['status']}: {accuracy}"
        return f"Stopping run `{run_id}`: the questions in flight end; resume it any time."

    # -- reading ---------------------------------------------------------------------------

    def _rows(self, request: gr.Request | None) -> list[EvalRunRow]:
        try:
            owner = self.person(request).name
        except Local2Error:
            return []  # signed out: nobody's runs
        return self.agent.evals.runs(owner, RUN_LIST)

    def list_runs(
        self, chart_set: str | None = None, request: gr.Request | None = None
    ) -> dict[Any, Any]:
        rows = self._rows(request)
        sets = list(dict.fromkeys(r["set"] for r in rows))
        shown = chart_set if chart_set in sets else (sets[0] if sets else None)
        return {
            self.runs: table(RUN_COLUMNS, run_rows(rows)),
            self.pick: gr.update(
                choices=[
                    (f"{r['run_id']} · {r['set']} · {started(r['created_at'])}", r["run_id"])
                    for r in rows
                ]
            ),
            self.chart_set: gr.update(choices=sets, value=shown),
            self.chart: accuracy_chart(rows, shown) if shown else None,
            self.set_pick: gr.update(choices=self.agent.evals.sets()),  # sets added since
        }

    def resumable(self, run_id: str | None, request: gr.Request | None = None) -> Any:
        """Resume, shown when the picked run has questions left and is not going."""
        if not run_id:
            return shown(False)
        try:
            status = self.agent.evals.show(run_id, self.person(request))["status"]
        except Local2Error:
            return shown(False)
        return shown(status in RESUMABLE)

    def draw(self, chart_set: str | None, request: gr.Request | None = None) -> PlotData | None:
        return accuracy_chart(self._rows(request), chart_set) if chart_set else None

    def show(self, run_id: str | None, request: gr.Request | None = None) -> tuple[str, Any]:
        if not run_id:
            return "", table(QUESTION_COLUMNS, [])
        try:
            detail = self.agent.evals.show(run_id, self.person(request))
        except Local2Error as exc:
            return notice_for(exc).markdown(), table(QUESTION_COLUMNS, [])
        manifest, summary = detail["manifest"], detail["summary"]
        grader = manifest["grader"]
        judge = grader_words(grader["model"], grader["backend"], grader["is_answerer"])
        if grader["is_answerer"]:
            judge += " (read its grades with care)"
        text = (
            f"**{manifest['set']['name']}** · {manifest['mode']} · {manifest['model']} "
            f"({manifest['backend']})  \n"  # its status: in the runs table, and when it ends
            f"{_accuracy(summary['accuracy'])} · exact match "
            f"{100 * summary['exact_match']['value']:.1f} % · grader: {judge}"
        )
        return text, table(QUESTION_COLUMNS, question_rows(detail["results"]))

    def open_question(
        self, run_id: str | None, selected: gr.SelectData, request: gr.Request | None = None
    ) -> tuple[Any, ...]:
        """The clicked question's session, opened where it lives."""
        row = selected.row_value or []
        session = str(row[-1]) if row else ""
        mode = "ask"
        if run_id and session:
            try:
                mode = self.agent.evals.show(run_id, self.person(request))["manifest"]["mode"]
            except Local2Error:
                session = ""
        if not session:
            return gr.update(), gr.update(), gr.update()
        if mode == "research":
            return gr.update(), gr.Tabs(selected="research"), gr.update(value=session)
        return gr.update(value=session), gr.Tabs(selected="time-travel"), gr.update()


def _accuracy(rate: Rate) -> str:
    return say_rate(rate, "accuracy") if rate["n"] else "nothing graded yet"
