"""A research run as the Research tab shows it: its checklist, sources, report and status.

:class:`RunView` follows one run's events (each step pending, running, done or failed, with
its duration, and what the run does now: :mod:`local2.ui._research_status`);
:class:`RunShown` is the tab's part that shows a run's page: cleared for a new run, then its
report, or, for a run that found no source, what it tried and the next step.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import gradio as gr

from local2 import events
from local2.contracts import (
    REPORT_FORMATS,
    WEB_FETCH,
    WEB_SEARCH,
    Person,
    PlannedStep,
    ResearchCall,
    ResearchPayload,
    ResearchSource,
    SourceMeta,
    SubQuestion,
)
from local2.memory import owner_folder
from local2.research import link_citations, plain, safe_url, why_found
from local2.service import export_run
from local2.storage import private_dir, write_private, write_private_bytes
from local2.ui._library_tab import is_entry_id, kept_link, kept_links
from local2.ui._research_status import Doing
from local2.ui._safe_markdown import neutralise
from local2.ui._updates import Updates

if TYPE_CHECKING:
    from local2.service import Agent

# Plain symbols: they render without an emoji font.
REPORTS = "reports"  # under the data directory
ICONS = {"pending": "○", "running": "▸", "done": "✓", "failed": "✗", "skipped": "–"}
# Where a plan came from, in words (a rule's plan says why instead: research/_planner.py)
ORIGINS = {
    "model": "the model's",
    "repaired": "the model's, after one repair",
    "person": "yours",
    "hop": "the second hop the model did not name",
    "clarify": "the model's, after your answer",
    "followup": "for a follow-up",
}
# What a run that reads only the library searches and reads it with (tools/_library_tools.py)
LIBRARY_TOOLS = (WEB_SEARCH, WEB_FETCH)


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
    details: list[str] = field(default_factory=list)  # the planner's own words, for Details
    sources: list[ResearchSource] = field(default_factory=list)
    payload: ResearchPayload | None = None
    doing: Doing = field(default_factory=Doing)  # what it does now, for the status line
    question: str = ""
    subquestions: list[SubQuestion] = field(default_factory=list)  # as last planned

    def pickable(self) -> list[SubQuestion]:
        """The sub-questions a person may stop or drop now: open, with a step still to run
        or one that found something (one whose every step failed or was skipped has
        nothing to stop and nothing to leave out)."""
        kept = []
        for q in self.subquestions:
            states = {
                str(step.get("status") or "pending")
                for step in self.steps.values()
                if step.get("branch") == q["id"]
            }
            if q.get("status") == "open" and states & {"pending", "running", "done"}:
                kept.append(q)
        return kept

    @property
    def branches(self) -> int:
        """How many sub-questions there are to pick from (more than one: one may be stopped)."""
        return len(self.pickable())

    def status(self) -> str:
        """The status line while it runs: the run, its question, and what it does now."""
        now = self.doing.now(self.steps)
        return f"Run `{self.run_id}` · {plain(self.question)} — **{plain(now)}**"

    def seed(self, payload: ResearchPayload) -> None:
        """Start from the run as it stands (a run going on from a pause or a follow-up)."""
        for step in payload.get("steps") or []:
            self.steps[str(step["id"])] = StepRow(**step)
        self.sources = list(payload.get("sources") or [])
        self.doing.found = len(self.sources)
        for record in payload.get("plan") or []:
            if record.get("why_detail"):
                self.details.append(
                    f"Round {record.get('round')}, the model's plan: {record['why_detail']}"
                )

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
            origin = str(entry.get("origin") or "")
            said = entry.get("why") or f"({ORIGINS.get(origin, origin)})"  # why a rule's plan
            self.notes.append(f"Plan for round {entry.get('round')}: {said}")
            if entry.get("why_detail"):  # what was wrong with the model's plan, as it said
                self.details.append(
                    f"Round {entry.get('round')}, the model's plan: {entry['why_detail']}"
                )
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
        self.doing.apply(entry, self.steps)

    def details_markdown(self) -> str:
        """The planner's own words on the plans it could not use (the Details view)."""
        if not self.details:
            return "_Nothing to show: every plan was used as the model wrote it._"
        return neutralise("\n".join(f"- {plain(d)[:400]}" for d in self.details))

    def checklist(self) -> str:
        if not self.steps:
            return "_The plan appears here._"
        lines = []
        for step in self.steps.values():
            status = step.get("status", "pending")
            if step.get("tool") == "compose" and self.payload and status != "skipped":
                status = "done"
            args = ", ".join(f"{k}={v}" for k, v in (step.get("args") or {}).items())
            line = f"{ICONS.get(status or '', '○')} **{step['id']}** `{step.get('tool', '')}`"
            if self.doing.library and step.get("tool") in LIBRARY_TOOLS:
                line += " in your library"  # a library-only run's web tools read the library
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


def record_said(meta: SourceMeta | None) -> str:
    """A source's date (or "undated"), where it was found and its flags, in a few words."""
    if not meta:
        return "undated"
    said = [str(meta["published"] or "undated"), plain(str(meta["provider"]))]
    if meta["kind"] == "preprint":
        said.append("preprint")
    if meta["retracted"]:
        said.insert(0, "**RETRACTED**")
    return " · ".join(said)


def sources_markdown(sources: Sequence[ResearchSource]) -> str:
    if not sources:
        return "_Sources found and read appear here._"
    lines = []
    for s in sources:
        kind = "read" if s.get("kind") == "page" else "found"
        url = safe_url(str(s.get("url") or ""))
        title = plain(str(s.get("title") or s.get("url") or ""))
        line = f"{s['n']}. [{title}]({url}) · {kind}" if url else f"{s['n']}. {title}"
        line = f"{line} · {record_said(s.get('meta'))}"
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
    name = f"report-{payload.get('run_id') or 'run'}.md"  # run ids follow the session id rule
    return private_file(data_dir, person, name, str(payload.get("report") or ""))


def private_file(data_dir: Path, person: Person, name: str, text: str | bytes) -> Path:
    """``text`` (or a file's bytes) as ``<data_dir>/reports/<their folder>/<name>``, for
    ``person`` alone."""
    folder = private_dir(private_dir(Path(data_dir) / REPORTS) / owner_folder(person.name))
    if isinstance(text, bytes):
        return write_private_bytes(folder / name, text)
    return write_private(folder / name, text)


# The download buttons beside "Download report (Markdown)": the report in the other formats,
# then its references (shown only where the report cites something).
EXPORTS = (
    ("html", "HTML"),
    ("pdf", "PDF"),
    ("docx", "Word"),
    ("bibtex", "References (BibTeX)"),
    ("ris", "References (RIS)"),
    ("csl", "References (CSL-JSON)"),
)


# The export files last written, by (data folder, person, run, format): the report's digest
# and the file.
_made: dict[tuple[str, str, str, str], tuple[str | None, Path]] = {}


class RunShown:
    """Mixed into :class:`~local2.ui._research_tab.ResearchTab`: a run's page (the tab builds
    the parts)."""

    agent: Agent
    status: Any
    plan: Any
    sources: Any
    report: Any
    download: Any
    exports: list[Any]  # a download button per format of EXPORTS
    followups: Any
    steer_note: Any
    details: Any
    branch: Any

    def cleared(self) -> dict[Any, Any]:
        """A new run's page: nothing left of the last run's plan, sources or report."""
        return {
            self.plan: "_The plan appears here._",
            self.details: RunView().details_markdown(),
            self.sources: sources_markdown([]),
            self.report: "",
            self.download: gr.update(visible=False),
            **{b: gr.update(visible=False) for b in self.exports},
            self.followups: "",
            self.steer_note: "",
            self.branch: gr.update(choices=[], value=None),  # nothing of the last run to pick
        }

    def _show(
        self, view: RunView, payload: ResearchPayload, person: Person, final: bool
    ) -> Updates:
        crit = payload.get("critique")
        grade = ""
        if crit:
            score = crit.get("score")
            grade = f" · critic {score}/5" if score is not None else " · critic: no grade"
        if payload.get("status") == "no_sources":
            return self._no_sources(view, payload)
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
            self.details: view.details_markdown(),
            self.sources: sources_markdown(payload.get("sources") or []),
            self.report: report_view(payload),
            self.download: gr.update(value=str(saved), visible=True),
            **self._exported(payload, person),
        }

    def _exported(self, payload: ResearchPayload, person: Person) -> Updates:
        """The report (HTML, PDF, Word) and its references as a file per format, each behind
        its download button; the references' none while the report cites nothing."""
        data_dir = self.agent.settings.data_dir
        cites = bool(payload.get("sources"))
        written = bool(str(payload.get("report") or "").strip())
        # A run shows its report twice (when written, when finished): the PDF and DOCX, a few
        # hundred ms each (bench/report_exports.py), are written again only if it changed.
        same = hashlib.sha256(repr((payload.get("report"), payload.get("sources"))).encode())
        shown: Updates = {}
        for button, (fmt, _label) in zip(self.exports, EXPORTS, strict=True):
            if not (cites if fmt not in REPORT_FORMATS else written):
                shown[button] = gr.update(visible=False)
                continue
            key = (str(data_dir), person.name, str(payload.get("run_id")), fmt)
            saved = _made.get(key, (None, Path()))
            if saved[0] != same.hexdigest() or not saved[1].is_file():
                made = export_run(payload, fmt)
                path = private_file(data_dir, person, made.filename, made.data)
                if len(_made) > 600:  # the last hundred runs or so
                    _made.clear()
                saved = _made[key] = (same.hexdigest(), path)
            shown[button] = gr.update(value=str(saved[1]), visible=True)
        return shown

    def _no_sources(self, view: RunView, payload: ResearchPayload) -> Updates:
        """A run with no usable source: no report, what it tried and the next step."""
        found = payload.get("no_sources")
        cause = str(found["cause"] if found else "").replace("_", " ")
        return {
            self.status: (
                f"Run `{view.run_id}` found no source ({plain(cause)}) · no report was written: "
                "the next step is below"
            ),
            self.plan: view.checklist(),
            self.details: view.details_markdown(),
            self.sources: sources_markdown([]),
            self.report: report_view(payload),
            self.download: gr.update(visible=False),
            **{b: gr.update(visible=False) for b in self.exports},
        }
