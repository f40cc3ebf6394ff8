"""``local2 research "QUESTION"``: a research run with a live checklist, then its report.

``local2 research list`` shows the runs; ``--resume RUN_ID`` continues one from its last
finished step. Runs are the person's own (local's, or ``--as NAME``'s): someone else's run
id answers as an unknown one does. The run id is printed first (on stderr with ``--json``,
so stdout stays JSON), the checklist goes to stderr as steps start and finish, the report to
stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from local2 import events
from local2.cli import gc_pause
from local2.cli.common import err, fail, id_param, offline_parts, out, person_of, settings_of
from local2.cli.errors import friendly_errors

ICONS = {"pending": "○", "started": "▸", "done": "✓", "failed": "✗", "skipped": "–"}
COLOURS = {"done": "green", "failed": "red", "skipped": "yellow", "started": "cyan"}


def _args_text(args: dict[str, Any], limit: int = 70) -> str:
    text = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Checklist:
    """Prints each step as it is planned, starts and ends (status and duration)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.steps: dict[str, dict[str, Any]] = {}

    def __call__(self, kind: str, data: Any) -> None:
        if kind == "event":
            self.event(data)

    def line(self, text: str) -> None:
        self.console.print(text)

    def event(self, entry: dict[str, Any]) -> None:
        subject = entry.get("subject", "")
        if subject == events.RESEARCH_PLAN:
            self.line(
                f"[bold]Plan[/] (round {entry.get('round')}, {entry.get('origin')}): "
                f"{escape(str(entry.get('goal') or ''))}"
            )
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
        elif subject == events.RESEARCH_REPORT:
            self.line(
                f"[bold]Report:[/] {entry.get('sources')} sources, {entry.get('citations')} "
                f"citations, {entry.get('unsupported')} unsupported statement(s) removed"
            )
        elif subject == events.CRITIQUE_RESULT:
            score = entry.get("score")
            grade = f"{score}/5" if score is not None else "no grade"
            self.line(f"[dim]Critic: {grade} — {escape(str(entry.get('feedback') or ''))}[/]")
        elif subject.startswith(events.TOOL_RESULT) and entry.get("error"):
            self.line(
                f"    [dim]{entry.get('tool')} attempt {entry.get('attempt', 1)}: "
                f"{escape(str(entry['error']))}[/]"
            )

    def step(self, entry: dict[str, Any]) -> None:
        status = str(entry.get("status"))
        step = self.steps.get(str(entry.get("id")), {"id": entry.get("id"), "tool": ""})
        icon = ICONS.get(status, "?")
        colour = COLOURS.get(status, "white")
        text = f"  [{colour}]{icon} {step['id']} {step.get('tool', '')}[/]"
        if status in ("done", "failed"):
            text += f" ({float(entry.get('duration_s') or 0):.2f} s"
            text += f", {entry.get('sources')} source(s))" if status == "done" else ")"
        if entry.get("error") or entry.get("reason"):
            text += f": {escape(str(entry.get('error') or entry.get('reason')))}"
        self.line(text)


def _offline(ctx: typer.Context) -> Any:
    """A research service for reading runs: no model server, tools, memory or critic."""
    from local2.service.research import Research

    return Research(settings_of(ctx), **offline_parts())


def show_runs(ctx: typer.Context, as_json: bool, limit: int) -> None:
    research = _offline(ctx)
    try:
        rows = research.runs(limit, person_of(ctx).name)
    finally:
        research.close()
    if as_json:
        print(json.dumps(rows, indent=2, default=str))
        return
    if not rows:
        err.print('No research runs yet: try local2 research "your question".')
        return
    from datetime import datetime

    from rich.table import Table

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


def run_research(
    ctx: typer.Context,
    question: str | None,
    resume: str | None,
    as_json: bool,
    out_file: Path | None,
    max_rounds: int | None,
    backend: str | None,
    model: str | None,
) -> None:
    from local2.cli.people import access_of
    from local2.service.research import Research

    person = person_of(ctx)
    if not resume and not (question or "").strip():
        fail('Give a question: local2 research "QUESTION" (or `list`, or --resume RUN_ID).', code=2)
    if resume:  # an unknown or finished run needs no model
        reader = _offline(ctx)
        try:
            with friendly_errors(), access_of(settings_of(ctx)) as access:
                known = reader.payload(resume, person, access)
        finally:
            reader.close()
        if known["status"] == "done":
            err.print(f"run {resume} finished already")
            _finish(known, as_json, out_file)
            return
    research = None
    say = err if as_json else out
    checklist = Checklist(err)
    try:
        with friendly_errors():
            research = Research(settings_of(ctx), backend=backend, model=model)
            gc_pause.resume("research")  # the run takes minutes
            if research.notice:
                err.print(f"[yellow]Notice:[/] {research.notice}")
            items = (
                research.resume(resume, person)
                if resume
                else research.stream(question or "", max_rounds=max_rounds, person=person)
            )
            payload: dict[str, Any] = {}
            for kind, data in items:
                if kind == "run":
                    verb = "resuming run" if data.get("resumed") else "run"
                    say.print(f"{verb} {data['run_id']}")
                    sys.stdout.flush()
                elif kind == "final":
                    payload = data
                else:
                    checklist(kind, data)
    except KeyboardInterrupt:
        err.print("\n[yellow]Interrupted.[/] Resume with: local2 research --resume RUN_ID")
        raise typer.Exit(130) from None
    finally:
        if research is not None:
            research.close()
    _finish(payload, as_json, out_file)


def _finish(payload: dict[str, Any], as_json: bool, out_file: Path | None) -> None:
    """The report to ``--out``, the payload (``--json``) or the report to stdout."""
    if out_file is not None:
        out_file.write_text(payload.get("report") or "", encoding="utf-8")
        err.print(f"Report written to {out_file}")
    if as_json:
        print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))
    elif out_file is None:
        out.print()
        out.print(payload.get("report") or "", markup=False)


def run_id_param(value: str | None) -> str | None:
    """Run ids follow the session-id rule (``local2.ids``), checked before anything loads."""
    return id_param("run id")(value)


def register(app: typer.Typer) -> None:
    @app.command()
    def research(
        ctx: typer.Context,
        question: Annotated[
            str | None,
            typer.Argument(help='The question, or "list" to show the runs so far.'),
        ] = None,
        resume: Annotated[
            str | None,
            typer.Option(
                "--resume",
                help="Continue this run from its last finished step.",
                callback=run_id_param,
            ),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the run's payload.")] = False,
        out_file: Annotated[
            Path | None, typer.Option("--out", help="Write the report (Markdown) here.")
        ] = None,
        max_rounds: Annotated[
            int | None,
            typer.Option("--max-rounds", min=1, max=10, help="Rounds (default: research.yaml)."),
        ] = None,
        limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Runs listed.")] = 20,
        model: Annotated[
            str | None, typer.Option("--model", "-m", help="Ollama model to use.")
        ] = None,
        backend: Annotated[
            str | None,
            typer.Option("--backend", help="ollama | embedded | auto (default: from config)."),
        ] = None,
    ) -> None:
        """Research a question: plan, search and read in rounds, then a verified report.

        The report cites only sources that were found or read; statements the sources do
        not support are removed and listed. `local2 research list` shows past runs.
        """
        if question == "list" and not resume:
            show_runs(ctx, as_json, limit)
            return
        run_research(ctx, question, resume, as_json, out_file, max_rounds, backend, model)
