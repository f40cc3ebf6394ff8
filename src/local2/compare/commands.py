"""``local2 retry`` and ``local2 arena``, and how a compare turn looks at a terminal.

``ask``/``chat`` take ``--model-b``/``--temperature-b`` (see :func:`options`); their stream
items go through :func:`show_item` first, which prints both answers side by side, the
judge's verdict and what to do next (``local2 feedback ... --prefer``, ``local2 retry``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:  # rich's tables load when a pair or the arena is printed (``local2`` start-up)
    from rich.console import Console

ModelBOpt = Annotated[
    str | None,
    typer.Option(
        "--model-b",
        help="A second model answers too; the judge compares them (ui/serve: "
        "the app's and the API's default).",
    ),
]
TemperatureBOpt = Annotated[
    float | None,
    typer.Option("--temperature-b", min=0.0, max=2.0, help="The second respondent's temperature."),
]


def options(model_b: str | None, temperature_b: float | None) -> dict[str, Any] | None:
    """The turn options for a second respondent; a bad value stops with a clear message."""
    from local2.cli import fail
    from local2.compare.spec import compare_spec

    try:
        spec = compare_spec(model_b, temperature_b)
    except ValueError as exc:
        fail(str(exc), code=2)
    return {"compare": spec} if spec else None


def _grade(critique: dict | None) -> str:
    score = (critique or {}).get("score")
    return f"{score}/5" if score is not None else "no grade"


def print_pair(payload: dict[str, Any], out: Console) -> None:
    """Both answers side by side, each with its model and grade."""
    from rich.table import Table

    respondents = payload["respondents"]
    table = Table(show_lines=True, expand=True)
    for rid in ("a", "b"):
        r = respondents[rid]
        table.add_column(f"{rid.upper()} · {r.get('label') or r.get('model')}", ratio=1)
    cells = []
    for rid in ("a", "b"):
        r = respondents[rid]
        text = r.get("answer") or f"[red](no answer: {r.get('error')})[/]"
        if r.get("critique"):
            text += f"\n[dim]critic: {_grade(r['critique'])}[/]"
        cells.append(text)
    table.add_row(*cells)
    out.print(table)


def print_verdict(payload: dict[str, Any], err: Console) -> None:
    pairwise = payload.get("pairwise") or {}
    winner = pairwise.get("winner")
    verdict = {"a": "A is better", "b": "B is better", "tie": "a tie"}.get(
        winner or "", f"no verdict ({pairwise.get('reason') or 'not judged'})"
    )
    err.print(f"[dim]Judge (both orders): {verdict}.[/]")
    err.print(
        f"[dim]Your turn: local2 feedback {payload['session_id']} {payload['query_id']} "
        "--prefer a|b|tie (A continues the conversation until you prefer B).[/]"
    )


def show_item(kind: str, data: Any, view: dict[str, Any], out: Console, err: Console) -> bool:
    """Render a compare or retry item; False when it is an ordinary one."""
    if kind == "respondent":
        rid = data["id"]
        if rid not in view.setdefault("answering", set()):
            view["answering"].add(rid)
            err.print(f"[dim]{rid.upper()} is answering…[/]")
        return True
    if kind == "answer" and data.get("respondents"):
        print_pair(data, out)
        return True
    if kind == "final" and data.get("pairwise"):
        print_verdict(data, err)
        return True
    if kind == "final" and data.get("retry"):
        retry = data["retry"]
        first, second = retry["first"].get("score"), retry["second"].get("score")
        err.print(
            f"[dim]Critic: first attempt {_grade({'score': first})}, this one "
            f"{_grade({'score': second})}; the conversation continues from attempt "
            f"{retry['shown']} (local2 retry {data['session_id']} {data['query_id']} "
            "--show 1|2 switches).[/]"
        )
        return True
    if kind == "final" and data.get("retry_offered"):
        critique = data.get("critique") or {}
        err.print(f"[dim]Critic: {_grade(critique)} — {critique.get('feedback', '')}[/]")
        err.print(
            "[yellow]Low grade. Try again with the critic's feedback: "
            f"local2 retry {data['session_id']} {data['query_id']}[/]"
        )
        return True
    return False


def _print_json(payload: Any) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


def retry(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="The session.")],
    query_id: Annotated[str, typer.Argument(help="The low-graded answer's query id.")],
    show: Annotated[
        int | None,
        typer.Option("--show", min=1, max=2, help="Switch the conversation to attempt 1 or 2."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Default: the first attempt's model.")
    ] = None,
) -> None:
    """Try an answer again with the critic's feedback; both attempts are kept, the
    higher-graded one continues the conversation (--show switches)."""
    from local2 import gc_pause
    from local2.cli import _offline_agent, approver, err, friendly_errors, make_agent, out
    from local2.compare import session

    with friendly_errors():
        if show is not None:
            agent = _offline_agent(ctx)
            try:
                result = session.show(agent, session_id, query_id, show)
            finally:
                agent.close()
            _print_json(result) if as_json else out.print(
                f"The conversation now continues from attempt {show}."
            )
            return
        reader = _offline_agent(ctx)
        try:
            first_model = session.retry_request(reader, session_id, query_id)[1]["model"]
        except session.CannotRetry as exc:
            reader.close()
            from local2.cli import fail

            fail(str(exc), code=2)
        reader.close()
        agent = make_agent(ctx, None, model or first_model)
        gc_pause.resume("retry")  # the second attempt may run for minutes
        try:
            view: dict[str, Any] = {}
            payload: dict[str, Any] = {}
            from local2.cli import _show_item

            asks = approver(not as_json)  # a script reads --json: waiting calls are denied
            for kind, data in session.retry(agent, session_id, query_id, asks):
                if kind == "final":
                    payload = data
                if not as_json:
                    _show_item(kind, data, view)
        finally:
            agent.close()
    if as_json:
        _print_json(payload)
    else:
        err.print(f"[dim]session {payload['session_id']} · query {payload['query_id']}[/]")


def arena(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV.")] = False,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Write the export here (.json or .csv).")
    ] = None,
) -> None:
    """Ratings per model from compare turns: Bradley-Terry with a 95% interval and vote
    counts, people's votes and the judge's apart."""
    from local2.arena.report import arena as table_of
    from local2.arena.report import as_csv as csv_text
    from local2.arena.report import as_json as json_text
    from local2.arena.votes import open_votes
    from local2.cli import out, settings_of

    votes_log = open_votes(settings_of(ctx))
    try:
        votes = votes_log.votes()
    finally:
        votes_log.close()
    table = table_of(votes)
    if out_file is not None:
        text = csv_text(table) if out_file.suffix.lower() == ".csv" else json_text(table, votes)
        out_file.write_text(text, encoding="utf-8")
        out.print(f"Wrote {out_file}.")
        return
    if as_json or as_csv:
        sys.stdout.write(csv_text(table) if as_csv else json_text(table, votes) + "\n")
        return
    if not votes:
        out.print("No votes yet: ask with --model-b (or Compare in the app) to start the arena.")
        return
    from rich.table import Table

    for group, title in (("people", "People's votes"), ("judge", "The judge's votes")):
        rows = table[group]
        grid = Table(title=title, title_justify="left")
        for column, justify in (
            ("model", "left"),
            ("rating", "right"),
            ("95% interval", "right"),
            ("votes", "right"),
            ("W-L-T", "right"),
        ):
            grid.add_column(column, justify=justify)  # type: ignore[arg-type]
        for r in rows:
            grid.add_row(
                r.model,
                f"{r.rating:.0f}",
                f"{r.ci_low:.0f}–{r.ci_high:.0f}",
                str(r.votes),
                f"{r.wins}-{r.losses}-{r.ties}",
            )
        out.print(grid if rows else f"{title}: none yet.")
    out.print(
        "[dim]Bradley-Terry, ties half a win, mean 1000; 400 points = 10:1 odds. "
        "Export: --csv, --json, --out FILE.[/]"
    )


def register(app: typer.Typer) -> None:
    app.command()(retry)
    app.command()(arena)
