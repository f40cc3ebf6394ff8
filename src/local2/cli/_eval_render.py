"""How an eval run looks at a terminal: a progress bar with the time left (stderr), then the
summary table and what it means (stdout); the list of runs; two runs compared.

Everything from a set or a model (questions, answers, names) is printed as text, never read
as console markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn
from rich.table import Table

from local2.cli._common import err, out
from local2.contracts import (
    Comparison,
    EvalDetail,
    EvalProgress,
    EvalRunRow,
    QuestionResult,
    Rate,
    RunSummary,
)
from local2.evals import percent, say_duration, short_rate
from local2.evals import say_rate as words


def say_rate(rate: Rate, what: str) -> str:
    """``accuracy 61.0 % (95 % CI 51.2-70.0 %, 61 of 100)`` (the service's words)."""

    return words(rate, what) if rate["n"] else f"{what}: nothing to count yet"


class ProgressBar:
    """The run's bar on stderr: questions recorded of all, the grades so far, time left."""

    def __init__(self, console: Console = err) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TextColumn("{task.fields[tally]}"),
            TextColumn("[dim]{task.fields[eta]}[/]"),
            console=console,
            transient=False,
        )
        self.task: TaskID | None = None

    def __enter__(self) -> ProgressBar:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def update(self, p: EvalProgress) -> None:
        tally = (
            f"[green]✓{p['correct']}[/] [red]✗{p['incorrect']}[/] "
            f"[yellow]–{p['not_attempted']}[/]"
            + (f" ?{p['ungraded']}" if p["ungraded"] else "")
            + (f" [red]failed {p['errors']}[/]" if p["errors"] else "")
        )
        eta = (
            "done"
            if p["recorded"] - p["errors"] >= p["total"]
            else f"ETA {say_duration(p['eta_s'])}"
        )
        done = p["recorded"] - p["errors"]
        if self.task is None:
            self.task = self.progress.add_task(
                "questions", total=p["total"], completed=done, tally=tally, eta=eta
            )
        else:
            self.progress.update(self.task, completed=done, tally=tally, eta=eta)


def _table_console() -> Console:
    return out if out.is_terminal else Console(width=200, highlight=False, soft_wrap=True)


def print_report(detail: EvalDetail, questions: bool = False) -> None:
    """A run's summary: grades, the accuracy with its interval, string scores, evidence,
    disagreements, time and tokens; with ``questions``, every question too."""
    summary, results = detail["summary"], detail["results"]
    print_run_heading(detail)
    print_grades(summary)
    print_scores(summary)
    counts = [r["tokens"] for r in results if r["tokens"]]
    prompt = sum(c.get("prompt", 0) for c in counts)
    completion = sum(c.get("completion", 0) for c in counts)
    out.print(
        f"Mean time {summary['mean_time_s']:.1f} s a question; tokens {prompt:,} in, "
        f"{completion:,} out"
    )
    if questions:
        print_questions(results)


def print_run_heading(detail: EvalDetail) -> None:
    """What ran: the set, the mode, the model, the search provider; and who graded (in
    yellow when the answering model graded itself)."""
    manifest = detail["manifest"]
    grader = manifest["grader"]
    settings = manifest["settings"]
    provider = settings.get("search_provider") or "?"
    if settings.get("offline"):
        provider += ", offline"
    out.print(
        f"Run {manifest['run_id']} · {escape(manifest['set']['name'])} "
        f"({len(manifest['selection']['ids'])} of {manifest['set']['questions']} questions) · "
        f"{manifest['mode']} · {escape(str(manifest['model']))} ({manifest['backend']}) · "
        f"search: {provider} · {detail['status']}"
    )
    if grader["backend"] is None:
        out.print(f"Grader: {escape(str(grader['model']))}, no model ({grader['prompt_version']})")
    elif grader["is_answerer"]:
        out.print(
            f"[yellow]Grader: {escape(str(grader['model']))} ({grader['backend']}), prompt "
            f"{grader['prompt_version']}: the model that answered grades its own answers.[/]"
        )
    else:
        out.print(
            f"Grader: {escape(str(grader['model']))} ({grader['backend']}), prompt "
            f"{grader['prompt_version']}"
        )


def print_grades(summary: RunSummary) -> None:
    """How many questions got each grade, and how many are not asked yet."""
    table = Table(box=None, pad_edge=False)
    table.add_column("grade")
    table.add_column("questions", justify="right")
    for label, count in (
        ("correct", summary["correct"]),
        ("incorrect", summary["incorrect"]),
        ("not attempted", summary["not_attempted"]),
        ("ungraded", summary["ungraded"]),
        ("failed (asked again on resume)", summary["errors"]),
    ):
        table.add_row(label, str(count))
    table.add_row("not yet asked", str(summary["questions"] - summary["recorded"]))
    _table_console().print(table)


def print_scores(summary: RunSummary) -> None:
    """The accuracy and string scores with their intervals, the evidence diagnosis, and the
    questions where the grader and the string match disagree."""
    out.print(say_rate(summary["accuracy"], "accuracy"))
    out.print(say_rate(summary["attempted_accuracy"], "correct of attempted"))
    out.print(
        f"{say_rate(summary['exact_match'], 'exact match')}; "
        f"gold in answer {percent(summary['contains_gold']['value'])}; mean F1 {summary['f1']:.2f}"
    )
    if summary["evidence_recall"] is not None:
        d = summary["diagnosis"]
        out.print(
            f"{say_rate(summary['evidence_recall'], 'evidence recall')}; of the answers not "
            f"correct: never found {d['never_found']}, partly found {d['partly_found']}, "
            f"found but misread {d['found_misread']}"
        )
    if summary["disagreements"]:
        listed = ", ".join(summary["disagreements"][:20])
        more = len(summary["disagreements"]) - 20
        out.print(
            f"The grader and the string match disagree on {len(summary['disagreements'])}: "
            f"{escape(listed)}{f' and {more} more' if more > 0 else ''}"
        )


def print_questions(results: Sequence[QuestionResult]) -> None:
    table = Table(box=None, pad_edge=False)
    for column in ("id", "grade", "EM", "F1", "evidence", "why wrong", "s", "session"):
        table.add_column(column, no_wrap=column != "id", overflow="fold")
    for r in results:
        evidence = r["evidence"]
        table.add_row(
            escape(r["id"]),
            "failed" if r["error"] else (r["grade"] or "ungraded"),
            "✓" if r["exact_match"] else "",
            f"{r['f1']:.2f}",
            f"{evidence['found']}/{evidence['total']}" if evidence else "",
            (r["diagnosis"] or "").replace("_", " "),
            f"{r['time_s']:.1f}",
            r["session_id"] or "",
        )
    _table_console().print(table)


def print_runs(rows: Sequence[EvalRunRow]) -> None:
    table = Table(box=None, pad_edge=False)
    for column in (
        "run",
        "status",
        "set",
        "mode",
        "model",
        "search",
        "done",
        "accuracy",
        "started",
    ):
        table.add_column(column, no_wrap=True)
    for r in rows:
        table.add_row(
            r["run_id"],
            r["status"],
            escape(r["set"]),
            r["mode"],
            escape(str(r["model"])) + (" *" if r["grader_is_answerer"] else ""),
            r["provider"],
            f"{r['recorded']}/{r['questions']}",
            short_rate(r["accuracy"]),
            datetime.fromtimestamp(r["created_at"]).strftime("%m-%d %H:%M"),
        )
    _table_console().print(table)
    err.print(
        "[dim]accuracy: correct of graded, [95 % interval]; * graded by the model that "
        "answered. Resume an interrupted or stopped run: local2 eval --resume RUN_ID[/]"
    )


def print_comparison(c: Comparison, a: str, b: str) -> None:
    table = Table(box=None, pad_edge=False, title=f"{c['paired']} questions both runs graded")
    table.add_column("")
    table.add_column(f"{b} correct", justify="right")
    table.add_column(f"{b} not", justify="right")
    table.add_row(f"{a} correct", str(c["both_correct"]), str(c["only_a"]))
    table.add_row(f"{a} not", str(c["only_b"]), str(c["neither"]))
    _table_console().print(table)
    out.print(say_rate(c["accuracy_a"], a))
    out.print(say_rate(c["accuracy_b"], b))
    out.print(escape(c["wording"]))
