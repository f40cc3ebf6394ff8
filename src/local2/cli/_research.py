"""``local2 research "QUESTION"``: a research run with a live checklist, then its report.

``local2 research list`` shows the runs; ``--resume RUN_ID`` continues one from its last
finished step. Runs are the person's own (local's, or ``--as NAME``'s): someone else's run
id answers as an unknown one does. The run id is printed first (on stderr with ``--json``,
so stdout stays JSON), the checklist goes to stderr as steps start and finish, the report to
stdout.

The person steers (:mod:`local2.cli._research_prompt`): at a terminal the planner may ask one
clarifying question first (``--clarify auto``, the default there; ``never`` without a
terminal); ``--review`` shows the plan before the first search, to approve, edit or stop
(``stop`` there, or at the question, ends the run: its report says what was read);
``--plan FILE`` gives the plan with no terminal (or answers a paused run's review, with
``--resume``, as ``--answer TEXT`` answers its question). ``local2 research followup RUN_ID
"QUESTION"`` asks a follow-up on a finished report, answered from its sources first.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.console import Console
from rich.markup import escape

import local2.cli._gc_pause as gc_pause
from local2 import events
from local2.cli._common import err, fail, id_param, offline_parts, out, person_of, settings_of
from local2.cli._errors import friendly_errors
from local2.cli._people import access_of
from local2.cli._render import listed_plainly
from local2.contracts import Person, collect_research
from local2.errors import InvalidInput

if TYPE_CHECKING:
    from local2.contracts import Followup, PlannedStep, ResearchItem, ResearchPayload
    from local2.service import Research

ICONS = {"pending": "○", "started": "▸", "done": "✓", "failed": "✗", "skipped": "–"}
NO_SOURCES_EXIT = 4  # the run gathered no usable source: no report (docs/cli.md)
ENDED = {"done": "finished", "stopped": "stopped ({stopped})", "no_sources": "found no source"}
COLOURS = {"done": "green", "failed": "red", "skipped": "yellow", "started": "cyan"}


@dataclass(frozen=True)
class Steering:
    """What the person asked for on the command line: the pauses, or their own answers."""

    review: bool = False
    clarify: str | None = None  # auto | never (None: auto at a terminal, else never)
    plan_file: Path | None = None
    answer: str | None = None
    sources: str | None = None  # web,arxiv,library,... or web|library|both (None: the setting)
    keep: str | None = None  # all | research | off (None: library.keep)
    scope: dict[str, Any] | None = None  # since, until, domains, exclude_domains (docs/research.md)

    def interactive(self) -> bool:
        return sys.stdin.isatty()

    def clarify_mode(self) -> Any:
        return self.clarify or ("auto" if self.interactive() else "never")

    def asks(self) -> bool:
        """Whether a pause is answered here (the person is at the terminal, or asked for
        the pause and types or pipes their answers)."""
        return self.interactive() or self.review or self.clarify == "auto"

    def plan_edit(self) -> Any:
        if self.plan_file is None:
            return None
        # lazy: pydantic, local2.contracts: ~84 ms, 50 modules at local2 --help
        from local2.cli._research_prompt import read_plan_file

        try:
            return read_plan_file(self.plan_file)
        except (OSError, ValueError) as exc:
            fail(f"Cannot read the plan in {self.plan_file}: {exc}", PLAN_FIX, code=2)

    def given(self) -> Any:
        """What ``--resume`` answers its paused run with (``--plan``/``--answer``), or None."""
        if self.answer is not None:
            return {"answer": self.answer}
        edit = self.plan_edit()
        return {"plan": edit} if edit is not None else None


PLAN_FIX = (
    'A plan is JSON ({"subquestions": [{"text": "..."}]}) or one sub-question a line '
    '("q2: text" keeps sub-question q2).'
)


def _args_text(args: dict[str, Any], limit: int = 70) -> str:  # as the plan wrote them (JSON)
    text = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Checklist:
    """Prints each step as it is planned, starts and ends (status and duration)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.steps: dict[str, PlannedStep] = {}  # as the research.plan events listed them

    def __call__(self, kind: str, data: Any) -> None:
        if kind == "event":
            self.event(data)

    def line(self, text: str) -> None:
        self.console.print(text)

    # entry: an event, its subject beside the event's own fields (as local2.events has them)
    def event(self, entry: dict[str, Any]) -> None:
        subject = entry.get("subject", "")
        if subject == events.RESEARCH_PLAN:
            self.line(
                f"[bold]Plan[/] (round {entry.get('round')}, {entry.get('origin')}): "
                f"{escape(str(entry.get('goal') or ''))}"
            )
            if entry.get("why"):  # why a rule's plan was used, in one sentence
                self.line(f"  {escape(str(entry['why']))}")
            for step in entry.get("steps") or []:
                self.steps[step["id"]] = step
                args = _args_text(step.get("args") or {})
                self.line(f"  {ICONS['pending']} {step['id']} {step['tool']} {escape(args)}")
        elif subject == events.RESEARCH_STEP:
            self.step(entry)
        elif subject == events.RESEARCH_REPLAN:
            self.line(f"[yellow]↻ Replan:[/] {escape(str(entry.get('reason') or ''))}")
        elif subject == events.RESEARCH_ROUND:
            gaps = entry.get("gaps") or []
            what = "follow-up: " + "; ".join(gaps) if gaps else (entry.get("stop") or "done")
            self.line(f"[bold]Round {entry.get('n')}[/] {escape(what)}")
        elif subject == events.RESEARCH_REPORT and entry.get("no_sources"):
            cause = str(entry["no_sources"]).replace("_", " ")
            self.line(f"[bold yellow]No sources[/] ({escape(cause)}): no report was written")
        elif subject == events.RESEARCH_REPORT:
            self.line(
                f"[bold]Report:[/] {entry.get('sources')} sources, {entry.get('citations')} "
                f"citations, {entry.get('unsupported')} unsupported statement(s) removed"
            )
        elif subject == events.RESEARCH_AWAITING:
            self.line(f"[bold yellow]Waiting for you:[/] the {entry.get('waits_for')}")
        elif subject == events.RESEARCH_INPUT:
            said = (
                entry.get("answer")
                or entry.get("refused")
                or ("stopped the run" if entry.get("stopped") else "")
                or (
                    "approved" if entry.get("approved") else "edited" if entry.get("edited") else ""
                )
            )
            self.line(f"[bold]You:[/] {escape(str(said or 'answered'))}")
        elif subject == events.RESEARCH_STEER:
            self.line(
                f"[bold]Your say[/] ({entry.get('kind')}: {escape(str(entry.get('value')))}): "
                f"{escape(str(entry.get('effect') or ''))}"
            )
        elif subject == events.RESEARCH_FOLLOWUP:
            missing = entry.get("missing") or []
            how = "from the sources read" if not missing else "searching " + "; ".join(missing)
            self.line(f"[bold]Follow-up {entry.get('n')}:[/] {escape(how)}")
        elif subject == events.CRITIQUE_RESULT:
            score = entry.get("score")
            grade = f"{score}/5" if score is not None else "no grade"
            self.line(f"[dim]Critic: {grade} — {escape(str(entry.get('feedback') or ''))}[/]")
        elif subject.startswith(events.TOOL_RESULT) and entry.get("error"):
            self.line(
                f"    [dim]{entry.get('tool')} attempt {entry.get('attempt', 1)}: "
                f"{escape(str(entry['error']))}[/]"
            )

    def step(self, entry: dict[str, Any]) -> None:  # a research.step event's fields
        status = str(entry.get("status"))
        known = self.steps.get(str(entry.get("id")))
        step_id, tool = (known["id"], known["tool"]) if known else (entry.get("id"), "")
        icon = ICONS.get(status, "?")
        colour = COLOURS.get(status, "white")
        text = f"  [{colour}]{icon} {step_id} {tool}[/]"
        if status in ("done", "failed"):
            text += f" ({float(entry.get('duration_s') or 0):.2f} s"
            text += f", {entry.get('sources')} source(s))" if status == "done" else ")"
        if entry.get("error") or entry.get("reason"):
            text += f": {escape(str(entry.get('error') or entry.get('reason')))}"
        self.line(text)


def _offline(ctx: typer.Context) -> Any:
    """A research service for reading runs: no model server, tools, memory or critic."""
    # lazy: langgraph, langchain_core, local2.tools: ~1.6 s, 1195 modules at local2 --help
    from local2.service import Research

    return Research(settings_of(ctx), **offline_parts())


def show_runs(ctx: typer.Context, as_json: bool, limit: int) -> None:
    with closing(_offline(ctx)) as research:
        rows = research.runs(limit, person_of(ctx).name)
    if listed_plainly(
        rows, as_json, 'No research runs yet: try local2 research "your question".', err
    ):
        return

    from rich.table import Table  # lazy: rich: ~5 ms, 4 modules at local2 --help

    table = Table(box=None, pad_edge=False)
    for column in ("run", "status", "steps", "sources", "started", "question"):
        table.add_column(column, no_wrap=column != "question", overflow="fold")
    for r in rows:
        started = datetime.fromtimestamp(r["created_at"]).strftime("%m-%d %H:%M")
        table.add_row(
            r["run_id"],
            r["status"],
            f"{r['steps_done']}/{r['steps']}",
            str(r["sources"]),
            started,
            escape(r["question"]),
        )
    (out if out.is_terminal else Console(width=200, highlight=False)).print(table)
    err.print("[dim]Resume an unfinished run with: local2 research --resume RUN_ID[/]")


def _answerer(wanted: bool) -> Any:
    """Who answers a pause: the person at this terminal (or on stdin when they asked for
    the pause), else no one (the run stays paused)."""
    if not wanted:
        return None
    # lazy: pydantic, local2.contracts: ~79 ms, 50 modules at local2 --help
    from local2.cli._research_prompt import terminal_answerer

    return terminal_answerer(
        lambda prompt: err.input(f"[bold yellow]{escape(prompt)}[/]"),
        lambda line: err.print(line, markup=False, highlight=False),
    )


def run_research(
    ctx: typer.Context,
    question: str | None,
    resume: str | None,
    as_json: bool,
    out_file: Path | None,
    max_rounds: int | None,
    backend: str | None,
    model: str | None,
    steer: Steering | None = None,
) -> None:
    # lazy: langgraph, langchain_core, local2.tools: ~1.5 s, 1195 modules at local2 --help
    from local2.service import Research

    steer = steer or Steering()
    person = person_of(ctx)
    if not resume and not (question or "").strip():
        fail('Give a question: local2 research "QUESTION" (or `list`, or --resume RUN_ID).', code=2)
    if resume and _finished_already(ctx, resume, person, as_json, out_file):
        return
    research = None
    say = err if as_json else out
    try:
        with friendly_errors():
            research = Research(settings_of(ctx), backend=backend, model=model)
            gc_pause.resume("research")  # the run takes minutes
            if research.notice:
                err.print(f"[yellow]Notice:[/] {research.notice}")
            said = _library_line(steer, settings_of(ctx).library.keep)
            if not resume and said:
                err.print(said, markup=False)
            items = _run_items(research, question, resume, max_rounds, person, steer)
            payload = _follow_run(items, say, Checklist(err))
    except KeyboardInterrupt:
        err.print("\n[yellow]Interrupted.[/] Resume with: local2 research --resume RUN_ID")
        raise typer.Exit(130) from None
    finally:
        if research is not None:
            research.close()
    if payload.get("status") == "awaiting_input":
        _still_paused(payload, as_json)
        return
    _finish(payload, as_json, out_file)


def _library_line(steer: Steering, setting: str) -> str:
    """What the run reads from and keeps, in one line, when that is not the usual (the web,
    kept as library.keep says): a run kept off says so."""
    names = [n.strip() for n in (steer.sources or "").split(",") if n.strip()]
    where = {
        ("library",): "Sources: your library only (no network).",
        ("both",): "Sources: your library first, the web for what it lacks.",
        ("web", "library"): "Sources: your library first, the web for what it lacks.",
        ("web",): "",
        (): "",
    }.get(tuple(names), f"Sources: {', '.join(names)}.")
    keep = steer.keep or ("off" if setting == "off" else "")
    kept = {
        "off": "Keeping nothing this run reads (keep: off).",
        "": "",
    }.get(keep, f"Keeping what it reads in your library (keep: {keep}).")
    return f"{where} {kept}".strip()


def _finished_already(
    ctx: typer.Context, resume: str, person: Person, as_json: bool, out_file: Path | None
) -> bool:
    """True when the run to resume has ended, finished or stopped (its report is shown
    again); an unknown or ended run needs no model."""

    reader = _offline(ctx)
    try:
        with friendly_errors(), access_of(settings_of(ctx)) as access:
            known = reader.payload(resume, person, access)
    finally:
        reader.close()
    if known["status"] not in ENDED:
        return False
    ended = ENDED[known["status"]].format(stopped=known["stopped"])
    err.print(f"run {resume} {ended} already")
    _finish(known, as_json, out_file)
    return True


def _run_items(
    research: Research,
    question: str | None,
    resume: str | None,
    max_rounds: int | None,
    person: Person,
    steer: Steering,
) -> Iterator[ResearchItem]:
    """The run's items: a new run of ``question``, or the ``resume``d one (with the person's
    answer to its pause, when they gave it)."""
    answer = _answerer(steer.asks())
    if resume and steer.given() is not None:
        return research.input(resume, steer.given(), person, answer=answer)
    if resume:
        return research.resume(resume, person, answer=answer)
    return research.stream(
        question or "",
        max_rounds=max_rounds,
        person=person,
        clarify=steer.clarify_mode(),
        review=steer.review,
        plan=steer.plan_edit(),
        answer=answer,
        sources=steer.sources,
        keep=cast(Any, steer.keep),
        scope=steer.scope,
    )


def _follow_run(
    items: Iterable[ResearchItem], say: Console, checklist: Checklist
) -> ResearchPayload:
    """Say the run's id, tick its steps off the checklist; its final payload."""

    def follow(kind: str, data: Any) -> None:
        if kind == "run":
            verb = "resuming run" if data.get("resumed") else "run"
            say.print(f"{verb} {data['run_id']}")
            sys.stdout.flush()
        elif kind not in ("final", "awaiting_input"):
            checklist(kind, data)

    return collect_research(items, follow)


def _still_paused(payload: ResearchPayload, as_json: bool) -> None:
    """The run waits for the person, and no one answered here: how to answer it later."""
    # lazy: pydantic, local2.contracts: ~123 ms, 50 modules at local2 --help
    from local2.cli._research_prompt import describe_request

    request = payload.get("awaiting")
    run_id = payload.get("run_id")
    for line in describe_request(request) if request else []:
        err.print(line, markup=False, highlight=False)
    how = (
        "--review (at a terminal) or --plan FILE"
        if request and request.get("waits_for") == "plan"
        else '--answer "TEXT"'
    )
    err.print(
        f"[yellow]The run waits for you.[/] Answer with: local2 research --resume {run_id} {how}"
    )
    if as_json:
        print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


def run_followup(ctx: typer.Context, run_id: str, question: str, as_json: bool) -> None:
    """``local2 research followup RUN_ID "QUESTION"``: the answer, from the run's sources first."""
    # lazy: langgraph, langchain_core, local2.tools: ~1.1 s, 1195 modules at local2 --help
    from local2.service import Research

    person = person_of(ctx)
    research = None
    answered: Followup | None = None
    checklist = Checklist(err)
    try:
        with friendly_errors():
            research = Research(settings_of(ctx))
            for kind, data in research.followup(run_id, question, person):
                if kind == "followup":
                    answered = data
                elif kind not in ("run", "final"):
                    checklist(kind, data)
    finally:
        if research is not None:
            research.close()
    if as_json:
        print(json.dumps(answered or {}, ensure_ascii=False, indent=2, default=str))
        return
    out.print()
    show_text((answered["answer"] if answered else None) or "")


def _finish(payload: ResearchPayload, as_json: bool, out_file: Path | None) -> None:
    """The report to ``--out`` (Markdown), the payload (``--json``) or the report to stdout
    (as plain text); a run that found no source exits with :data:`NO_SOURCES_EXIT`."""
    if out_file is not None:
        out_file.write_text(payload.get("report") or "", encoding="utf-8")
        err.print(f"Report written to {out_file}")
    if as_json:
        print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))
    elif out_file is None:
        out.print()
        show_text(payload.get("report") or "")
    if payload.get("status") == "no_sources":
        raise typer.Exit(NO_SOURCES_EXIT)


def show_text(markdown: str) -> None:
    """Markdown printed as plain text: a terminal shows no escapes or marks."""
    # markdown-it takes ~77 ms to import: only a command that prints a report pays for it.
    from local2.cli._plain_text import markdown_text

    out.print(markdown_text(markdown) if markdown.strip() else "", markup=False, end="")


def check_sourcing(
    ctx: typer.Context,
    sources: str | None,
    scope: dict[str, Any],  # since, until, domains, exclude_domains as typed (JSON)
) -> None:
    """An unknown source, a malformed date or ``--since`` after ``--until`` refused before
    any model is opened (exit 2, with what is accepted)."""
    # lazy: langgraph, langchain_core, local2.tools: ~1.0 s, 1195 modules at local2 --help
    from local2.service import run_scope, run_sources

    try:
        run_sources(sources, settings_of(ctx))
        run_scope(scope, settings_of(ctx))
    except InvalidInput as exc:
        fail(str(exc), exc.fix, code=2)


def export_run(ctx: typer.Context, run_id: str, fmt: str, out_file: Path | None) -> None:
    """``local2 research export RUN_ID --format bibtex``: the run's references (or report)
    on stdout, or written to ``--out``; a PDF or DOCX is never written to a terminal (exit
    2, before anything is read); an unknown or another person's run: exit 3."""
    # lazy: langgraph, langchain_core, local2.tools: ~1.0 s, 1195 modules at local2 --help
    from local2.contracts import BINARY_FORMATS
    from local2.service import export_format

    with friendly_errors():  # an unknown format: exit 2, with the list
        name = export_format(fmt)
    if name in BINARY_FORMATS and out_file is None and sys.stdout.isatty():
        fail(
            f"A {name.upper()} file is not for a terminal: nothing was written.",
            f"Write it to a file: local2 research export {run_id} --format {name} "
            f"--out report.{name} (or redirect: > report.{name}).",
            code=2,
        )
    reader = _offline(ctx)
    try:
        with friendly_errors(), access_of(settings_of(ctx)) as access:
            exported = reader.export(run_id, name, person_of(ctx), access)
    finally:
        reader.close()
    if out_file is not None:
        out_file.write_bytes(exported.data)
        err.print(f"wrote {exported.format} to {out_file}", markup=False)
        return
    if exported.binary:
        sys.stdout.buffer.write(exported.data)
        sys.stdout.buffer.flush()
        return
    text = exported.text
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _clarify_param(value: str | None) -> str | None:
    if value is not None and value not in ("auto", "never"):
        raise typer.BadParameter("auto or never")
    return value


def _choice(value: str | None, name: str, choices: tuple[str, ...]) -> str | None:
    if value is not None and value not in choices:
        raise typer.BadParameter(f"{name} takes {', '.join(choices)}")
    return value


def run_id_param(value: str | None) -> str | None:
    """Run ids follow the session-id rule (``local2.ids``), checked before anything loads."""
    return id_param("run id")(value)


QuestionArg = Annotated[
    str | None,
    typer.Argument(
        help='The question; "list" shows the runs so far; "followup RUN_ID QUESTION" '
        "asks a follow-up on a finished report."
    ),
]
MoreArg = Annotated[
    list[str] | None,
    typer.Argument(help="After followup: the run id and the question.", show_default=False),
]
ResumeOpt = Annotated[
    str | None,
    typer.Option(
        "--resume",
        help="Continue this run from its last finished step.",
        callback=run_id_param,
    ),
]
ReportOutOpt = Annotated[
    Path | None, typer.Option("--out", help="Write the report (Markdown) here.")
]
MaxRoundsOpt = Annotated[
    int | None,
    typer.Option("--max-rounds", min=1, max=10, help="Rounds (default: research.yaml)."),
]
ReviewOpt = Annotated[
    bool,
    typer.Option("--review", help="Show the plan before the first search: approve or edit."),
]
PlanOpt = Annotated[
    Path | None,
    typer.Option(
        "--plan",
        help="Your plan (JSON, or one sub-question a line), run as given; with "
        "--resume, the answer to a paused run's review.",
        exists=True,
        dir_okay=False,
    ),
]
ClarifyOpt = Annotated[
    str | None,
    typer.Option(
        "--clarify",
        help="auto: the planner may ask one question first (default at a terminal); never.",
        callback=_clarify_param,
    ),
]
SourcesOpt = Annotated[
    str | None,
    typer.Option(
        "--sources",
        help="Where to look, comma-separated: web, library, arxiv, pubmed, semantic_scholar, "
        "openalex, crossref, wikipedia (both: web,library; library alone: no network; "
        "default research.sources).",
    ),
]
SinceOpt = Annotated[
    str | None,
    typer.Option(
        "--since",
        help="Only sources published on or after: 2024-03-05, 2024-03, 2024 or 'past year'.",
    ),
]
UntilOpt = Annotated[
    str | None,
    typer.Option("--until", help="Only sources published on or before (a date, as --since)."),
]
DomainsOpt = Annotated[
    str | None,
    typer.Option("--domains", help="Only sources on these hosts, comma-separated."),
]
ExcludeDomainsOpt = Annotated[
    str | None,
    typer.Option("--exclude-domains", help="Never sources on these hosts, comma-separated."),
]
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        help="export: bibtex, ris, csl (CSL-JSON); or the report: md, html, pdf, docx "
        "(pdf and docx to --out FILE or a redirect, never a terminal).",
    ),
]
KeepOpt = Annotated[
    str | None,
    typer.Option(
        "--keep",
        help="What this run keeps in your library: all, research, off (default library.keep).",
        callback=lambda value: _choice(value, "--keep", ("all", "research", "off")),
    ),
]
AnswerOpt = Annotated[
    str | None,
    typer.Option("--answer", help="With --resume: the answer to a paused run's question."),
]


def register(app: typer.Typer) -> None:
    @app.command()
    def research(
        ctx: typer.Context,
        question: QuestionArg = None,
        more: MoreArg = None,
        resume: ResumeOpt = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the run's payload.")] = False,
        out_file: ReportOutOpt = None,
        max_rounds: MaxRoundsOpt = None,
        limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Runs listed.")] = 20,
        model: Annotated[
            str | None, typer.Option("--model", "-m", help="Ollama model to use.")
        ] = None,
        backend: Annotated[
            str | None,
            typer.Option("--backend", help="ollama | embedded | auto (default: from config)."),
        ] = None,
        review: ReviewOpt = False,
        plan: PlanOpt = None,
        clarify: ClarifyOpt = None,
        answer: AnswerOpt = None,
        sources: SourcesOpt = None,
        keep: KeepOpt = None,
        since: SinceOpt = None,
        until: UntilOpt = None,
        domains: DomainsOpt = None,
        exclude_domains: ExcludeDomainsOpt = None,
        fmt: FormatOpt = "bibtex",
    ) -> None:
        """Research a question: plan, search and read in rounds, then a verified report.

        The report cites only sources that were found or read; statements the sources do
        not support are removed and listed. `local2 research list` shows past runs;
        `local2 research followup RUN_ID "QUESTION"` asks a follow-up on a finished report;
        `local2 research export RUN_ID --format bibtex` prints its references (ris, csl) or
        the report (md, html; pdf and docx with `--out FILE`).
        """
        if question == "list" and not resume:
            show_runs(ctx, as_json, limit)
            return
        if question == "followup" and not resume:
            if len(more or []) != 2:
                fail(
                    'Give the run and the question: local2 research followup RUN_ID "QUESTION"',
                    code=2,
                )
            run_id, asked = more or ["", ""]
            run_followup(ctx, run_id_param(run_id) or "", asked, as_json)
            return
        if question == "export" and not resume:
            if len(more or []) != 1:
                fail("Give the run: local2 research export RUN_ID --format bibtex", code=2)
            export_run(ctx, run_id_param((more or [""])[0]) or "", fmt, out_file)
            return
        if more:
            fail(f"Unexpected arguments: {' '.join(more)} (quote the question).", code=2)
        scope = {"since": since, "until": until, "domains": domains}
        scope["exclude_domains"] = exclude_domains
        check_sourcing(ctx, sources, scope)
        steering = Steering(review, clarify, plan, answer, sources, keep, scope)
        run_research(ctx, question, resume, as_json, out_file, max_rounds, backend, model, steering)
