"""``local2 retry`` and ``local2 arena``: a second attempt at a low-graded answer, and the
ratings per model that compare turns leave (``ask``/``chat`` take ``--model-b``). Both are
the person's own (local's, or ``--as NAME``'s): their sessions, and the votes cast in them.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import local2.cli._gc_pause as gc_pause
from local2.cli._common import (
    approver,
    err,
    make_agent,
    offline_agent,
    out,
    person_of,
    settings_of,
)
from local2.cli._errors import friendly_errors
from local2.cli._people import access_of
from local2.cli._render import TerminalView, print_json, show_item
from local2.contracts import collect_turn

if TYPE_CHECKING:
    from local2.arena import Rating


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

    person = person_of(ctx)
    with friendly_errors():
        if show is not None:
            agent = offline_agent(ctx)
            try:
                agent.access.write_session(person, session_id)
                result = agent.retries.show(session_id, query_id, show)
            finally:
                agent.close()
            print_json(result) if as_json else out.print(
                f"The conversation now continues from attempt {show}."
            )
            return
        reader = offline_agent(ctx)
        try:
            reader.access.write_session(person, session_id)
            first_model = reader.retries.retry_request(session_id, query_id)[1]["model"]
        finally:
            reader.close()
        agent = make_agent(ctx, None, model or first_model)
        gc_pause.resume("retry")  # the second attempt may run for minutes
        try:
            view: TerminalView = {}
            asks = approver(not as_json)  # a script reads --json: waiting calls are denied
            items = agent.retries.retry(session_id, query_id, asks, person=person)
            payload = collect_turn(items, None if as_json else partial(show_item, state=view))
        finally:
            agent.close()
    if as_json:
        print_json(payload)
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
    counts, people's votes and the judge's apart (from your own sessions' votes)."""
    # lazy: pydantic, charset_normalizer, local2.service: ~239 ms, 113 modules at local2 --help
    from local2.arena import arena as table_of
    from local2.arena import as_csv as csv_text
    from local2.arena import as_json as json_text
    from local2.service import own_votes

    settings = settings_of(ctx)
    with friendly_errors(), access_of(settings) as access:
        votes = own_votes(settings, access, person_of(ctx))
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
    print_arena(table)


def print_arena(table: dict[str, list[Rating]]) -> None:
    """The ratings as two tables, people's votes and the judge's, and how to read them."""
    from rich.table import Table  # lazy: rich: ~11 ms, 4 modules at local2 --help

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
            grid.add_column(column, justify=justify)  # type: ignore[arg-type]  # rich's justify literal, from the table above
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
