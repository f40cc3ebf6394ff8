"""The app's Research tab: a question in, the plan as a live checklist, sources, the report.

The person steers the run (:mod:`local2.ui.research_steer`): the plan is shown for review
before the first search (the default; a switch turns it off), an ambiguous question is
answered before planning, a say reaches the running run, and follow-ups go under the report.

The checklist follows the run's events (:mod:`local2.ui.research_shown`), and the status
line names what the run does now, from the first moment (:mod:`local2.ui.research_status`);
the sources panel lists what the ledger holds; the report shows citations as links to their
sources and offers a Markdown download (a run that found no source shows what it tried and
the next step instead). Steering controls show only while they apply. Past runs can be
reopened, and an unfinished one resumed. Everything the model or a page wrote is shown as
text: citations and references link only to ledger URLs, and nothing loads by itself. Each
run is the signed-in person's: the list of past runs shows only theirs, and someone else's
run id is as unknown as one that never was.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import gradio as gr

from local2 import events
from local2.contracts import REPORT_FORMATS, Person, ResearchSource, RunItem
from local2.errors import InvalidInput, Local2Error
from local2.research import plain
from local2.ui.notices import notice_for
from local2.ui.research_shown import EXPORTS, RunShown, RunView, sources_markdown
from local2.ui.research_status import PLANNING
from local2.ui.research_steer import Mode, ResearchSteer
from local2.ui.sign_in import person_of
from local2.ui.updates import Updates

if TYPE_CHECKING:
    from local2.service import Agent, Research

REFRESH_S = 0.2
IMMEDIATE = ("research.", events.TOOL_REQUEST)  # shown at once: the status line names them
PAUSED = {
    "plan": "**The plan is ready: edit its sub-questions, then Approve.**",
    "answer": "**A question before planning: answer it below.**",
}


SCHOLARLY = [
    ("arXiv", "arxiv"),
    ("PubMed", "pubmed"),
    ("Semantic Scholar", "semantic_scholar"),
    ("OpenAlex (needs a key)", "openalex"),
    ("Crossref", "crossref"),
    ("Wikipedia", "wikipedia"),
]


PAPERS = "papers"  # the scholarly sources ticked under "More sources" alone
BASES = [
    ("The web", "web"),
    ("My library only (no network)", "library"),
    ("Both", "both"),
    ("Papers only (those ticked below)", PAPERS),
]
NO_PAPERS = (
    "Papers only searches the sources ticked under 'More sources, dates and sites', and none "
    "is ticked.",
    "Tick arXiv, PubMed or another there, or choose the web or your library.",
)


def sources_shown(names: Sequence[str]) -> tuple[str, list[str]]:
    """``research.sources`` as the tab shows it: web, library or both, and the others (only
    others: papers only)."""
    own = [n for n in ("web", "library") if n in names]
    more = [n for n in names if n not in ("web", "library")]
    base = "both" if len(own) == 2 else (own[0] if own else (PAPERS if more else "web"))
    return base, more


def run_sources(base: str, more: Sequence[str]) -> str:
    """The sources a run from the tab searches: the web, the library or both, and any
    others ticked under "More sources"; papers only: those alone (none ticked: refused)."""
    if base == PAPERS:
        if not more:
            raise InvalidInput(*NO_PAPERS)
        return ",".join(more)
    names = {"web": ["web"], "library": ["library"], "both": ["web", "library"]}[base]
    return ",".join([*names, *more])


def run_choices(runs: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [
        (
            f"{str(r['status']).replace('_', ' ')} · {r['question'][:60]} · {r['run_id']}",
            r["run_id"],
        )
        for r in runs
    ]


class ResearchTab(ResearchSteer, RunShown):
    """The Research tab: builds its components (inside an open ``gr.Tab``) and wires its
    events as it lays them out."""

    title = "Research"
    tab_id = "research"

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

    def build(self, item: gr.Tab) -> None:
        concurrency_limit = self.agent.settings.ui.concurrency_limit
        self.build_question()
        self.build_pause()
        self.build_steer()
        self.build_results()
        self.build_past_runs()
        outputs = self.run_outputs()
        for trigger in (self.start.click, self.question.submit):
            trigger(
                self.run,
                [
                    self.question,
                    self.rounds,
                    self.review,
                    self.sources_from,
                    self.more_sources,
                    self.since,
                    self.until,
                    self.domains,
                    self.exclude_domains,
                ],
                outputs,
                concurrency_limit=concurrency_limit,
                show_progress="minimal",
            )
        self.open.click(self.reopen, [self.past], outputs, concurrency_limit=concurrency_limit)
        # Papers only: the sources it searches are ticked in the fold, opened for them.
        self.sources_from.change(
            self.papers_only, [self.sources_from], [self.scope_box, self.more_sources]
        )
        self.refresh.click(self.list_runs, None, [self.past])
        self.wire_steering(outputs, concurrency_limit)

    def wire(self, demo: gr.Blocks) -> None:
        """Nothing more: :meth:`build` wired it."""

    @staticmethod
    def papers_only(base: str) -> tuple[Any, Any]:
        """The fold opened, its list named for what it is, when the papers alone are
        searched; as it was otherwise."""
        if base == PAPERS:
            return gr.update(open=True), gr.update(label="Search these (papers only)")
        return gr.update(), gr.update(label="Also search")

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
        base, extra = sources_shown(settings.sources)
        self.sources_from = gr.Radio(
            BASES,
            value=base,
            label="Sources",
            elem_id="research-sources-from",
        )
        self.build_scope(extra)
        self.status = gr.Markdown("", elem_id="research-status")

    def build_scope(self, extra: list[str]) -> None:
        """Papers and encyclopedias besides, and a window in time and place: folded away
        until a person opens it (one line for a newcomer)."""
        settings = self.agent.settings.research
        opened = bool(extra or settings.since or settings.until or settings.domains)
        with gr.Accordion(
            "More sources, dates and sites", open=opened, elem_id="research-scope"
        ) as self.scope_box:
            self.more_sources = gr.Dropdown(
                SCHOLARLY,
                value=extra,
                multiselect=True,
                label="Also search",
                info="Papers and encyclopedias, each through its own public API.",
                elem_id="research-more-sources",
            )
            with gr.Row():
                self.since = gr.Textbox(
                    value=settings.since or "",
                    label="Published since",
                    placeholder="2024-01-01, 2024 or past year",
                    elem_id="research-since",
                )
                self.until = gr.Textbox(
                    value=settings.until or "",
                    label="Published until",
                    placeholder="2025-06-30 (optional)",
                    elem_id="research-until",
                )
            with gr.Row():
                self.domains = gr.Textbox(
                    value=", ".join(settings.domains),
                    label="Only these sites",
                    placeholder="nature.com, arxiv.org",
                    elem_id="research-domains",
                )
                self.exclude_domains = gr.Textbox(
                    value=", ".join(settings.exclude_domains),
                    label="Never these sites",
                    placeholder="example.com",
                    elem_id="research-exclude-domains",
                )

    def build_results(self) -> None:
        """The plan and sources beside the report (with its download and follow-ups)."""
        with gr.Row():
            with gr.Column(scale=2):
                gr.Markdown("#### Plan")
                self.plan = gr.Markdown("_The plan appears here._", elem_id="research-plan")
                with gr.Accordion("Details", open=False, elem_id="research-details-box"):
                    self.details = gr.Markdown(
                        RunView().details_markdown(), elem_id="research-details"
                    )
                gr.Markdown("#### Sources")
                self.sources = gr.Markdown(sources_markdown([]), elem_id="research-sources")
            with gr.Column(scale=3):
                gr.Markdown("#### Report")
                self.report = gr.Markdown("", elem_id="research-report")
                # the report in each format on one row, its references on the next
                with gr.Row():
                    self.download = gr.DownloadButton(
                        "Download report (Markdown)",
                        visible=False,
                        size="sm",
                        elem_id="research-download",
                    )
                    self.exports = [
                        self._export_button(fmt, label)
                        for fmt, label in EXPORTS
                        if fmt in REPORT_FORMATS
                    ]
                with gr.Row():
                    self.exports += [
                        self._export_button(fmt, label)
                        for fmt, label in EXPORTS
                        if fmt not in REPORT_FORMATS
                    ]
                self.build_followup()

    @staticmethod
    def _export_button(fmt: str, label: str) -> Any:
        """A download button for one export format, shown once there is something to take."""
        return gr.DownloadButton(
            label, visible=False, size="sm", elem_id=f"research-download-{fmt}"
        )

    def build_past_runs(self) -> None:
        """The past runs, to open one or resume it."""
        with gr.Accordion("Past runs", open=False, elem_id="research-past-runs"), gr.Row():
            self.past = gr.Dropdown(
                choices=[],
                label="Run",
                scale=4,
                allow_custom_value=True,
                elem_id="research-past",
            )
            self.refresh = gr.Button("Refresh", scale=1, size="sm", elem_id="research-refresh")
            self.open = gr.Button("Open / resume", scale=1, elem_id="research-open")

    def run_outputs(self) -> list[Any]:
        """What a run's handlers update, in the order they yield it."""
        return [
            self.status,
            self.plan,
            self.details,
            self.sources,
            self.report,
            self.download,
            *self.exports,
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
            self.branch_row,
            self.branch,
            self.steer_note,
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
        more: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        domains: str | None = None,
        exclude_domains: str | None = None,
        request: gr.Request | None = None,
    ) -> Iterator[Updates]:
        if (question or "").strip():  # at once, before the run is opened: a clean page
            yield {**self.panels("idle"), **self.cleared(), self.status: f"**{PLANNING}**"}
        try:
            person = self.person(request)
            items = self.research.stream(
                question or "",
                max_rounds=int(rounds or 0) or None,
                person=person,
                clarify="auto",
                review=bool(review),
                sources=run_sources(sources or "web", more or []),
                scope={
                    "since": since,
                    "until": until,
                    "domains": domains,
                    "exclude_domains": exclude_domains,
                },
            )
        except Local2Error as exc:
            yield {self.status: notice_for(exc).markdown()}
            return
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
                    waits = PAUSED.get(str(data.get("waits_for")), PAUSED["plan"])
                    shown = {self.plan: view.checklist(), **pause, self.status: waits}
                elif kind == "final" and data.get("status") == "awaiting_input":
                    waits = str((data.get("awaiting") or {}).get("waits_for") or "plan")
                    said = PAUSED.get(waits, PAUSED["plan"])
                    shown = {self.status: f"Run `{view.run_id}` waits for you. {said}"}
                elif kind in ("report", "final"):
                    view.payload = data
                    shown = self._show(view, data, person, final=kind == "final")
                    if kind == "final":
                        mode, end = self.ended(data)
                        shown |= end
                else:
                    continue
                yield {**self.panels(mode, view.branches), **shown}
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
        view.run_id, view.question = data["run_id"], data["question"]
        said = data.get("library")  # where it looks, and a run kept off says so
        where = {"library": " · from your library only", "both": " · your library first"}
        extra = where.get(str(said["sources"] if said else None), "")
        extra += f" · {plain(str(said['note']))}" if said and said["keep"] == "off" else ""
        view.doing.library = bool(said and said["sources"] == "library")
        if not fresh:  # going on: from its plan so far
            view.seed(self.research.payload(view.run_id, person))
            view.doing.between = "Going on from where it was…"
            return {
                self.run_id: view.run_id,
                self.status: view.status() + extra,
                self.plan: view.checklist(),
            }
        started = {**self.cleared(), self.run_id: view.run_id, self.status: view.status() + extra}
        if question is None:  # a past run reopened: its question in the box
            started[self.question] = data["question"]
        # a question just asked stays in the box: asked again ("My library only" after a
        # web run that found nothing), it needs no retyping
        return started

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
        subject = str(data.get("subject") or "")
        shown: dict[Any, Any] = {}
        if subject in (events.RESEARCH_PLAN, events.RESEARCH_STEER):
            view.subquestions = list(self.research.payload(view.run_id, person)["subquestions"])
        if subject in (events.RESEARCH_PLAN, events.RESEARCH_STEER, events.RESEARCH_STEP):
            shown |= self.branches(view.pickable())
        if subject == events.RESEARCH_STEP:
            view.sources = [ResearchSource(**s) for s in self.research.found(view.run_id)]
        elif now - last < REFRESH_S and not shown and not subject.startswith(IMMEDIATE):
            return None, last
        shown |= {
            self.status: view.status(),
            self.plan: view.checklist(),
            self.details: view.details_markdown(),
            self.sources: sources_markdown(view.sources),
        }
        return shown, now
