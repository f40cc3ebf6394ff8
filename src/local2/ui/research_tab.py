"""The app's Research tab: a question in, the plan as a live checklist, sources, the report.

The person steers the run (:mod:`local2.ui.research_steer`): the plan is shown for review
before the first search (the default; a switch turns it off), an ambiguous question is
answered before planning, a say reaches the running run, and follow-ups go under the report.

The checklist follows the run's events (each step pending, running, done or failed, with its
duration); the sources panel lists what the ledger holds; the report shows citations as
links to their sources and offers a Markdown download. Past runs can be reopened, and an
unfinished one resumed. Everything the model or a page wrote is shown as text: citations
and references link only to ledger URLs, and nothing loads by itself. Each run is the
signed-in person's: the list of past runs shows only theirs, and someone else's run id is as
unknown as one that never was.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import gradio as gr

from local2 import events
from local2.contracts import (
    Person,
    PlannedStep,
    ResearchCall,
    ResearchPayload,
    ResearchSource,
    RunItem,
)
from local2.errors import Local2Error
from local2.service import (
    link_citations,
    owner_folder,
    plain,
    private_dir,
    safe_url,
    why_found,
    write_private,
)
from local2.ui.library_tab import is_entry_id, kept_link, kept_links
from local2.ui.notices import notice_for
from local2.ui.research_steer import Mode, ResearchSteer
from local2.ui.safe_markdown import neutralise
from local2.ui.sign_in import person_of
from local2.ui.updates import Updates

if TYPE_CHECKING:
    from local2.service import Agent, Research

# Plain symbols: they render without an emoji font.
REPORTS = "reports"  # under the data directory
ICONS = {"pending": "○", "running": "▸", "done": "✓", "failed": "✗", "skipped": "–"}
REFRESH_S = 0.2


class StepRow(TypedDict, total=False):
    """A step of the checklist: as the payload or a ``research.plan`` event gave it, with
    what its ``research.step`` events said since."""

    id: str | None
    description: str | None
    tool: str | None
    args: dict[str, Any] | None  # as the planner (a model) or the person wrote them
    requires: list[str] | None
    round: int | None
    status: str | None
    error: str | None
    duration_s: float | None
    calls: list[ResearchCall]
    sources: int
    branch: str | None
    followup: int | None


@dataclass
class RunView:
    """One run as its events arrive: steps by id in plan order, and what happened."""

    run_id: str = ""
    steps: dict[str, StepRow] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sources: list[ResearchSource] = field(default_factory=list)
    payload: ResearchPayload | None = None

    def seed(self, payload: ResearchPayload) -> None:
        """Start from the run as it stands (a run going on from a pause or a follow-up)."""
        for step in payload.get("steps") or []:
            self.steps[str(step["id"])] = StepRow(**step)
        self.sources = list(payload.get("sources") or [])

    # entry: an event entry, its own fields beside subject and t (as local2.events has them)
    def apply(self, entry: dict[str, Any]) -> None:
        subject = entry.get("subject")
        if subject == events.RESEARCH_PLAN:
            planned: list[PlannedStep] = entry.get("steps") or []
            for new in planned:
                self.steps[str(new["id"])] = {
                    "id": new["id"],
                    "tool": new["tool"],
                    "args": new["args"],
                    "description": new["description"],
                    "requires": new["requires"],
                    "branch": new["branch"],
                    "status": "pending",
                }
            for step_id, step in list(self.steps.items()):
                if step["status"] == "pending" and step_id not in {
                    s["id"] for s in entry.get("steps") or []
                }:
                    del self.steps[step_id]  # replaced by this plan
            self.notes.append(f"Plan for round {entry.get('round')} ({entry.get('origin')})")
        elif subject == events.RESEARCH_STEP:
            known: StepRow = {"id": entry.get("id"), "tool": ""}
            step = self.steps.setdefault(str(entry.get("id")), known)
            status = str(entry.get("status"))
            step["status"] = "running" if status == "started" else status
            step["duration_s"] = entry.get("duration_s")
            step["error"] = entry.get("error") or entry.get("reason")
        elif subject == events.RESEARCH_REPLAN:
            self.notes.append(f"Replanned: {entry.get('reason')}")
        elif subject == events.RESEARCH_ROUND:
            gaps = entry.get("gaps") or []
            what = "follow-up: " + "; ".join(gaps) if gaps else (entry.get("stop") or "done")
            self.notes.append(f"Round {entry.get('n')}: {what}")
        elif subject == events.RESEARCH_STEER:
            self.notes.append(f"You said ({entry.get('kind')}): {entry.get('effect')}")
        elif subject == events.RESEARCH_INPUT:
            stopped = "stopped the run" if entry.get("stopped") else "plan approved"
            said = entry.get("answer") or entry.get("refused") or stopped
            self.notes.append(f"You: {said}")
        elif subject == events.RESEARCH_FOLLOWUP:
            missing = entry.get("missing") or []
            how = "searching " + "; ".join(missing) if missing else "from the sources read"
            self.notes.append(f"Follow-up {entry.get('n')}: {how}")

    def checklist(self) -> str:
        if not self.steps:
            return "_The plan appears here._"
        lines = []
        for step in self.steps.values():
            status = step.get("status", "pending")
            if step.get("tool") == "compose" and self.payload:
                status = "done"
            args = ", ".join(f"{k}={v}" for k, v in (step.get("args") or {}).items())
            line = f"{ICONS.get(status or '', '○')} **{step['id']}** `{step.get('tool', '')}`"
            if args:
                line += f" — {plain(args)[:120]}"
            if status == "running":
                line += " (running…)"
            elif (took := step.get("duration_s")) is not None and status in ("done", "failed"):
                line += f" ({float(took):.2f} s)"
            if error := step.get("error"):
                line += f"  \n  _{plain(str(error))[:200]}_"
            lines.append(f"- {line}")
        notes = "\n".join(f"- {plain(n)[:300]}" for n in self.notes[-6:])
        return neutralise("\n".join(lines) + (f"\n\n**Progress**\n{notes}" if notes else ""))


def sources_markdown(sources: Sequence[ResearchSource]) -> str:
    if not sources:
        return "_Sources found and read appear here._"
    lines = []
    for s in sources:
        kind = "read" if s.get("kind") == "page" else "found"
        url = safe_url(str(s.get("url") or ""))
        title = plain(str(s.get("title") or s.get("url") or ""))
        line = f"{s['n']}. [{title}]({url}) · {kind}" if url else f"{s['n']}. {title}"
        why = why_found(s)
        line = f"{line} · {plain(why)}" if why else line
        kept = str(s.get("kept_id") or "")
        lines.append(f"{line} · kept copy {kept_link(kept)}" if is_entry_id(kept) else line)
    return neutralise("\n".join(lines))


def report_view(payload: ResearchPayload) -> str:
    """The verified report with each ``[n]`` a link to its source (from the ledger), through
    the app's shared neutraliser like every other model text."""
    report = link_citations(str(payload.get("report") or ""), payload.get("sources") or [])
    return neutralise(kept_links(report))


def report_file(data_dir: Path, person: Person, payload: ResearchPayload) -> Path:
    """The report as a Markdown file for ``person`` to download:
    ``<data_dir>/reports/<their folder>/report-<run>.md``, readable only by the server's
    user (folders 0700, the file 0600), never in a temp folder the machine's users share."""
    folder = private_dir(private_dir(Path(data_dir) / REPORTS) / owner_folder(person.name))
    name = f"report-{payload.get('run_id') or 'run'}.md"  # run ids follow the session id rule
    return write_private(folder / name, str(payload.get("report") or ""))


def run_choices(runs: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [(f"{r['status']} · {r['question'][:60]} · {r['run_id']}", r["run_id"]) for r in runs]


class ResearchTab(ResearchSteer):
    """Builds the tab's components (inside an open ``gr.Tab``) and handles its events."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._research: Research | None = None
        self.proxied = bool(agent.settings.server.trusted_user_header)

    def person(self, request: gr.Request | None) -> Person:
        """Whose runs these are: the person signed in (:func:`local2.ui.sign_in.person_of`)."""
        return person_of(self.agent.access, self.proxied, request)

    @property
    def status_part(self) -> Any:
        return self.status

    @property
    def research(self) -> Research:
        if self._research is None:
            self._research = self.agent.research
        return self._research

    def build(self, concurrency_limit: int) -> None:
        self.build_question()
        self.build_pause()
        self.build_steer()
        self.build_results()
        self.build_past_runs()
        outputs = self.run_outputs()
        for trigger in (self.start.click, self.question.submit):
            trigger(
                self.run,
                [self.question, self.rounds, self.review, self.sources_from],
                outputs,
                concurrency_limit=concurrency_limit,
                show_progress="minimal",
            )
        self.open.click(self.reopen, [self.past], outputs, concurrency_limit=concurrency_limit)
        self.refresh.click(self.list_runs, None, [self.past])
        self.wire_steering(outputs, concurrency_limit)

    def build_question(self) -> None:
        """The question, its rounds, the Research button and whether to review the plan."""
        settings = self.agent.settings.research
        gr.Markdown(
            "Research a question in rounds: a plan you can watch, searches and pages read "
            "side by side, and a report whose every citation is a source that was found or "
            "read. Statements the sources do not support are removed and listed."
        )
        with gr.Row():
            self.question = gr.Textbox(
                label="Research question",
                placeholder="e.g. Why did Kelsby keep its old swing bridge?",
                scale=5,
                elem_id="research-question",
            )
            self.rounds = gr.Slider(
                1,
                10,
                value=settings.max_rounds,
                step=1,
                label="Rounds",
                scale=1,
                elem_id="research-rounds",
            )
            self.start = gr.Button("Research", variant="primary", scale=1, elem_id="research-run")
        self.review = gr.Checkbox(
            value=True,
            label="Show me the plan before the first search",
            elem_id="research-review",
        )
        self.sources_from = gr.Radio(
            [("The web", "web"), ("My library only (no network)", "library"), ("Both", "both")],
            value="web",
            label="Sources",
            elem_id="research-sources-from",
        )
        self.status = gr.Markdown("", elem_id="research-status")

    def build_results(self) -> None:
        """The plan and sources beside the report (with its download and follow-ups)."""
        with gr.Row():
            with gr.Column(scale=2):
                gr.Markdown("#### Plan")
                self.plan = gr.Markdown("_The plan appears here._", elem_id="research-plan")
                gr.Markdown("#### Sources")
                self.sources = gr.Markdown(sources_markdown([]), elem_id="research-sources")
            with gr.Column(scale=3):
                gr.Markdown("#### Report")
                self.report = gr.Markdown("", elem_id="research-report")
                self.download = gr.DownloadButton(
                    "Download report (Markdown)", visible=False, elem_id="research-download"
                )
                self.build_followup()

    def build_past_runs(self) -> None:
        """The past runs, to open one or resume it."""
        with gr.Accordion("Past runs", open=False), gr.Row():
            self.past = gr.Dropdown(
                choices=[],
                label="Run",
                scale=4,
                allow_custom_value=True,
                elem_id="research-past",
            )
            self.refresh = gr.Button("Refresh", scale=1, size="sm")
            self.open = gr.Button("Open / resume", scale=1, elem_id="research-open")

    def run_outputs(self) -> list[Any]:
        """What a run's handlers update, in the order they yield it."""
        return [
            self.status,
            self.plan,
            self.sources,
            self.report,
            self.download,
            self.question,
            self.run_id,
            self.pause_box,
            self.pause_info,
            self.plan_box,
            self.plan_edit,
            self.shown_plan,
            self.question_box,
            self.answer,
            self.steer_box,
            self.branch,
            self.followup_box,
            self.followup_q,
            self.followups,
        ]

    # -- handlers --------------------------------------------------------------------------

    def list_runs(self, request: gr.Request | None = None) -> Any:
        try:
            owner = self.person(request).name
        except Local2Error:
            return gr.update(choices=[])  # signed out: nobody's runs
        return gr.update(choices=run_choices(self.research.runs(30, owner)))

    def run(
        self,
        question: str,
        rounds: float | None,
        review: bool = True,
        sources: Any = "web",
        request: gr.Request | None = None,
    ) -> Iterator[Updates]:
        try:
            person = self.person(request)
            items = self.research.stream(
                question or "",
                max_rounds=int(rounds or 0) or None,
                person=person,
                clarify="auto",
                review=bool(review),
                sources=sources or "web",
            )
        except Local2Error as exc:
            yield {self.status: notice_for(exc).markdown()}
            return
        yield {**self.panels("idle"), self.followups: ""}
        yield from self._follow(items, question, person, fresh=True)

    def reopen(self, run_id: str | None, request: gr.Request | None = None) -> Iterator[Updates]:
        try:
            person = self.person(request)
            items = self.research.resume((run_id or "").strip(), person)
        except Local2Error as exc:
            yield {self.status: notice_for(exc).markdown()}
            return
        yield from self._follow(items, None, person, fresh=True)

    def _follow(
        self,
        items: Iterator[tuple[str, Any]],
        question: str | None,
        person: Person,
        fresh: bool = False,
    ) -> Iterator[Updates]:
        """Show the run's items as they come; ``fresh``: a run opened anew (else a run going
        on from a pause or a follow-up, whose report and plan stay on screen)."""
        view = RunView()
        last = 0.0
        mode: Mode = "running"
        try:
            for kind, data in items:
                shown: dict[Any, Any] = {}
                if kind == "run":
                    shown = self._run_started(view, data, question, person, fresh)
                elif kind == "event":
                    refreshed, last = self._run_event(view, data, person, last)
                    if refreshed is None:
                        continue
                    shown = refreshed
                elif kind == "awaiting_input":
                    mode, pause = self.paused(data)
                    shown = {self.plan: view.checklist(), **pause}
                elif kind == "final" and data.get("status") == "awaiting_input":
                    shown = {self.status: f"Run `{view.run_id}` waits for you."}
                elif kind in ("report", "final"):
                    view.payload = data
                    shown = self._show(view, data, person, final=kind == "final")
                    if kind == "final":
                        mode, end = self.ended(data)
                        shown |= end
                else:
                    continue
                yield {**self.panels(mode), **shown}
        except Local2Error as exc:
            yield {
                **self.panels("idle"),
                self.status: f"{notice_for(exc).markdown()}  \nThe run can be resumed from its "
                f"last finished step: `{view.run_id}` under Past runs.",
            }

    def _run_started(
        self,
        view: RunView,
        data: RunItem,
        question: str | None,
        person: Person,
        fresh: bool,
    ) -> dict[Any, Any]:
        """The run's id and question; a fresh run clears the last report, a run going on
        shows its plan so far."""
        view.run_id = data["run_id"]
        said = data.get("library")  # where it looks, and a run kept off says so
        where = {"library": " · from your library only", "both": " · your library first"}
        extra = where.get(str(said["sources"] if said else None), "")
        extra += f" · {plain(str(said['note']))}" if said and said["keep"] == "off" else ""
        shown: dict[Any, Any] = {
            self.run_id: view.run_id,
            self.status: f"Run `{view.run_id}` · {plain(data['question'])} · going on{extra}",
        }
        if not fresh:
            view.seed(self.research.payload(view.run_id, person))
            shown |= {self.plan: view.checklist()}
        if fresh:
            shown |= {
                self.status: f"Run `{view.run_id}` · {plain(data['question'])}",
                self.report: "",
                self.download: gr.update(visible=False),
                self.question: data["question"] if question is None else "",
            }
        return shown

    def _run_event(
        self,
        view: RunView,
        data: dict[str, Any],  # an event entry, its own fields beside subject and t
        person: Person,
        last: float,
    ) -> tuple[dict[Any, Any] | None, float]:
        """The plan and sources after an event: at once after a plan, a steer or a step,
        else at most every ``REFRESH_S`` (None: not now); and when they were last shown."""
        view.apply(data)
        now = time.monotonic()
        subject = data.get("subject")
        shown: dict[Any, Any] = {}
        if subject in (events.RESEARCH_PLAN, events.RESEARCH_STEER):
            shown |= self.branches(self.research.payload(view.run_id, person)["subquestions"])
        if subject == events.RESEARCH_STEP:
            view.sources = [ResearchSource(**s) for s in self.research.found(view.run_id)]
        elif now - last < REFRESH_S and not shown:
            return None, last
        shown |= {
            self.plan: view.checklist(),
            self.sources: sources_markdown(view.sources),
        }
        return shown, now

    def _show(
        self, view: RunView, payload: ResearchPayload, person: Person, final: bool
    ) -> Updates:
        crit = payload.get("critique")
        grade = ""
        if crit:
            score = crit.get("score")
            grade = f" · critic {score}/5" if score is not None else " · critic: no grade"
        removed = len(payload.get("unsupported") or [])
        saved = report_file(self.agent.settings.data_dir, person, payload)  # Gradio serves a copy
        ended = "finished" if final else "reported"
        if final and payload.get("status") == "stopped":
            ended = f"stopped ({plain(str(payload.get('stopped') or 'by the person'))})"
        return {
            self.status: (
                f"Run `{view.run_id}` {ended} · "
                f"{len(payload.get('sources') or [])} sources · {payload.get('citations', 0)} "
                f"citations · {removed} unsupported statement(s) removed{grade}"
            ),
            self.plan: view.checklist(),
            self.sources: sources_markdown(payload.get("sources") or []),
            self.report: report_view(payload),
            self.download: gr.update(value=str(saved), visible=True),
        }
