"""``local2 eval``: run a question set and grade every answer, list and show runs, compare two.

- ``local2 eval SET [--mode ask|research] [--model M] [--grader G] [--limit N]
  [--sample N --seed S] [--concurrency K] [--out DIR]``: a run, with a progress bar and
  the time left on stderr, then its summary on stdout; ``--resume RUN_ID`` goes on with a
  stopped, interrupted or killed run (only the questions without a record are asked);
- ``local2 eval demo``: the set shipped with LoCAL2, offline, on the embedded demo model
  unless ``--backend`` or ``--model`` says otherwise;
- ``local2 eval list``, ``local2 eval show RUN_ID [--csv FILE]``, ``local2 eval compare
  RUN_A RUN_B`` (exact McNemar on the questions both graded).

Start-up matters (``bench/startup.py``): the bar and the tables are imported when used.

Runs are the person's own (local's, or ``--as NAME``'s). The run id is printed first (on
stderr, so ``--json`` keeps stdout JSON). Ctrl-C stops the run; it resumes later.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

import local2.cli._gc_pause as gc_pause
from local2.cli._common import err, fail, id_param, offline_agent, person_of, settings_of
from local2.cli._errors import friendly_errors
from local2.cli._people import access_of
from local2.cli._render import print_json

if TYPE_CHECKING:
    from local2.contracts import EvalDetail, EvalItem, EvalRunStart, Person
    from local2.service import Access, Evals

DEMO = "demo"
USAGE = "local2 eval SET | demo | list | show RUN_ID | compare RUN_A RUN_B  (or --resume RUN_ID)"


def _reader(ctx: typer.Context, access: Access) -> Evals:
    # lazy: langgraph, langchain_core, local2.tools: ~2.1 s, 1098 modules at local2 --help
    from local2.service import Evals

    return Evals(settings_of(ctx), access)


def list_runs(ctx: typer.Context, as_json: bool, everyone: bool) -> None:

    with friendly_errors(), access_of(settings_of(ctx)) as access:
        owner = access.listing_owner(person_of(ctx), everyone)
        rows = _reader(ctx, access).runs(owner)
    if as_json:
        print_json(rows)
    elif not rows:
        err.print("No eval runs yet: try local2 eval demo")
    else:
        # lazy: rich, local2.evals: ~29 ms, 18 modules at local2 --help
        from local2.cli._eval_render import print_runs

        print_runs(rows)


def show_run(ctx: typer.Context, run_id: str, as_json: bool, csv_file: Path | None) -> None:

    with friendly_errors(), access_of(settings_of(ctx)) as access:
        evals = _reader(ctx, access)
        detail = evals.show(run_id, person_of(ctx))
        if csv_file is not None:
            err.print(f"CSV written to {evals.export_csv(run_id, person_of(ctx), csv_file)}")
    if as_json:
        print_json(detail)
    else:
        # lazy: rich, local2.evals: ~35 ms, 18 modules at local2 --help
        from local2.cli._eval_render import print_report

        print_report(detail, questions=True)


def compare_runs(ctx: typer.Context, run_a: str, run_b: str, as_json: bool) -> None:

    with friendly_errors(), access_of(settings_of(ctx)) as access:
        comparison = _reader(ctx, access).compare(run_a, run_b, person_of(ctx))
    if as_json:
        print_json(comparison)
    else:
        # lazy: rich, local2.evals: ~30 ms, 18 modules at local2 --help
        from local2.cli._eval_render import print_comparison

        print_comparison(comparison, run_a, run_b)


def run_set(ctx: typer.Context, set_name: str | None, resume: str | None, **flags: Any) -> None:
    """Start (or resume) a run and follow it to its end, then print its summary."""
    # lazy: rich, local2.evals: ~42 ms, 18 modules at local2 --help
    from local2.cli._eval_render import ProgressBar, print_report

    person = person_of(ctx)
    as_json, out_dir = flags.pop("as_json"), flags.pop("out_dir")
    agent = None
    items: Iterator[EvalItem] | None = None
    run_id = resume or ""
    detail: EvalDetail
    try:
        with friendly_errors():
            agent = offline_agent(ctx)  # the store; each run's answering agent sits beside it
            if resume:
                items = agent.evals.resume(resume, concurrency=flags["concurrency"], person=person)
            else:
                flags["concurrency"] = flags["concurrency"] or 1
                items = agent.evals.start(set_name or "", person=person, any_path=True, **flags)
            gc_pause.resume("eval")  # a run takes minutes
            with ProgressBar() as bar:
                for kind, data in items:
                    if kind == "run":
                        run_id = data["run_id"]
                        _announce(data)
                    elif kind == "progress":
                        bar.update(data)
            detail = agent.evals.show(run_id, person)
            if out_dir is not None:
                _export(agent.evals, detail, out_dir, person)
    except KeyboardInterrupt:
        err.print(f"\n[yellow]Stopped.[/] Resume with: local2 eval --resume {run_id}")
        raise typer.Exit(130) from None
    finally:
        if isinstance(items, Generator):
            items.close()  # a Ctrl-C: the questions in flight end, the run is marked stopped
        if agent is not None:
            agent.close()
    if as_json:
        print_json({key: detail[key] for key in ("manifest", "status", "summary")})
    else:
        print_report(detail)
        err.print(f"[dim]Every question: local2 eval show {run_id}[/]")
    if detail["status"] == "stopped":
        err.print(f"[yellow]Stopped.[/] Resume with: local2 eval --resume {run_id}")


def _announce(data: EvalRunStart) -> None:
    verb = "resuming run" if data["resumed"] else "run"
    err.print(
        f"{verb} {data['run_id']}: {escape(data['set'])} · {data['mode']} · "
        f"{escape(str(data['model']))} ({data['backend']}) · {data['total']} questions"
        + (f", {data['recorded']} recorded already" if data["resumed"] else "")
        + f" · {data['concurrency']} at a time"
    )
    if data["grader_is_answerer"]:
        err.print("[yellow]The grader is the model that answers.[/]")
    elif data["grader"] == "match":
        err.print("Graded by match: a gold answer's words in the answer (no model).")


def _export(evals: Evals, detail: EvalDetail, out_dir: Path, person: Person) -> None:
    """``<run id>.csv`` and ``<run id>.json`` (manifest, status, summary) into ``out_dir``."""
    run_id = detail["manifest"]["run_id"]
    out_dir.mkdir(parents=True, exist_ok=True)
    evals.export_csv(run_id, person, out_dir / f"{run_id}.csv")
    report = {key: detail[key] for key in ("manifest", "status", "summary")}
    summary = out_dir / f"{run_id}.json"
    summary.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    err.print(f"Written: {out_dir / f'{run_id}.csv'} and {summary}")


WhatArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="SET (a .csv, .jsonl, .json or a folder), demo, list, show RUN_ID or "
        "compare RUN_A RUN_B.",
        show_default=False,
    ),
]
EvalBackendOpt = Annotated[
    str | None,
    typer.Option("--backend", help="ollama | openai | embedded | auto (default: config)."),
]
GraderOpt = Annotated[
    str | None,
    typer.Option("--grader", help="The grading model (default: the critic's judge)."),
]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", "-n", min=1, help="The first N questions.")
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option("--concurrency", "-k", min=1, max=16, help="Questions at once."),
]
EvalResumeOpt = Annotated[
    str | None,
    typer.Option("--resume", help="Go on with this run.", callback=id_param("eval run id")),
]
OutDirOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Also write the run's CSV and summary JSON here."),
]
CsvOpt = Annotated[Path | None, typer.Option("--csv", help="show: write the results as CSV here.")]


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_command(
        ctx: typer.Context,
        what: WhatArg = None,
        mode: Annotated[str, typer.Option("--mode", help="ask | research.")] = "ask",
        model: Annotated[
            str | None, typer.Option("--model", "-m", help="The model that answers.")
        ] = None,
        backend: EvalBackendOpt = None,
        grader: GraderOpt = None,
        limit: LimitOpt = None,
        sample: Annotated[
            int | None, typer.Option("--sample", min=1, help="N questions at random.")
        ] = None,
        seed: Annotated[int | None, typer.Option("--seed", help="The sample's seed.")] = None,
        concurrency: ConcurrencyOpt = None,
        resume: EvalResumeOpt = None,
        out_dir: OutDirOpt = None,
        csv_file: CsvOpt = None,
        everyone: Annotated[
            bool, typer.Option("--all", help="list: everyone's runs (an admin).")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Measure answers: run a question set, grade every answer, report accuracy with its
        95 % interval (docs/evals.md)."""
        args = list(what or [])
        verb = args[0] if args else ""
        if verb == "list" and len(args) == 1:
            return list_runs(ctx, as_json, everyone)
        if verb == "show" and len(args) == 2:
            return show_run(ctx, _checked(args[1]), as_json, csv_file)
        if verb == "compare" and len(args) == 3:
            return compare_runs(ctx, _checked(args[1]), _checked(args[2]), as_json)
        if verb in ("list", "show", "compare") or len(args) > 1 or (not args and not resume):
            fail(f"Give one of: {USAGE}", code=2)
        if verb == DEMO and backend is None and model is None:
            backend = "embedded"  # the demo runs offline on the embedded model
        run_set(
            ctx,
            verb or None,
            resume,
            mode=mode,
            model=model,
            backend=backend,
            grader=grader,
            limit=limit,
            sample=sample,
            seed=seed,
            concurrency=concurrency,
            as_json=as_json,
            out_dir=out_dir,
        )


def _checked(run_id: str) -> str:
    checked = id_param("eval run id")(run_id)
    assert checked is not None
    return checked
