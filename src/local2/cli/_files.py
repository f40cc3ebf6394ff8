"""``local2 index [FOLDER]`` (build the search_files index; a folder named is added to
files.roots) and ``local2 runs list|show`` (audit log).

The file index is everyone's; the audit log shows the person (local, or ``--as NAME``) only
the turns of their own sessions: another's query id answers as an unknown one does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console
from rich.text import Text

from local2.cli._common import config_dir_of, err, fail, out, person_of, settings_of
from local2.cli._errors import friendly_errors
from local2.cli._people import access_of
from local2.cli._render import listed_plainly

if TYPE_CHECKING:
    from local2.config import Settings
    from local2.contracts import AuditRun

runs_app = typer.Typer(help="The audit log: every turn, its tools, evidence and answer.")


def index(
    ctx: typer.Context,
    folders: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="FOLDER",
            help="A folder to index; one that is not among files.roots yet is added to them "
            "in the config directory's files.yaml.",
        ),
    ] = None,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Drop the index and embed every file again.")
    ] = False,
) -> None:
    """Index your folders for search_files (files.roots, and any FOLDER named); only changed
    files re-embed."""
    # lazy: pydantic, rich, local2.service: ~155 ms, 123 modules at local2 --help
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from local2.service import open_desk

    settings = with_folders(ctx, [Path(f) for f in folders or []])
    with friendly_errors("cannot open the file index"):
        desk = open_desk(settings)  # the folders' index is everyone's: no owner checks
        desk.check_folders()  # none of them exists: said before the progress bar
    columns = (
        TextColumn("[bold]Indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", style="dim"),
    )
    with (
        friendly_errors("embedding failed"),
        Progress(*columns, console=err, transient=False) as bar,
    ):
        task = bar.add_task("", total=None)

        def step(done: int, total: int, current: str) -> None:
            bar.update(task, completed=done, total=total, description=current)

        report = desk.index_folders(step, rebuild=rebuild)
    out.print(
        f"{report.files} files: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.removed} removed; {report.chunks} chunks "
        f"with {report.embedder} in {report.seconds:.1f}s"
    )
    for line in report.skipped:
        err.print(f"[yellow]skipped[/] {line}")


NO_CONFIG_DIR = (
    "LoCAL2 has no config directory to keep it in: make one with a files.yaml that lists "
    "it, point LOCAL2_CONFIG at it, and index: mkdir -p {dir} && printf '{line}\\n' > "
    "{dir}/files.yaml && export LOCAL2_CONFIG={dir} && local2 index"
)
SUGGESTED_CONFIG_DIR = "~/.config/local2"


def with_folders(ctx: typer.Context, folders: list[Path]) -> Settings:
    """The settings with ``folders`` among files.roots: each one not there yet is added to
    the config directory's files.yaml (and the settings read again), or the error says which
    file to write and where."""
    # lazy: pydantic, yaml, local2.config: ~80 ms, 69 modules at local2 --help
    from local2.config import FILES_YAML, add_root, load_settings

    settings = settings_of(ctx)
    config_dir = config_dir_of(ctx)
    roots = [r.expanduser().resolve() for r in settings.files.roots]
    added = False
    for given in folders:
        folder = given.expanduser().resolve()
        if not folder.is_dir():
            fail(f"not a folder: {given}", "name a folder that exists, e.g. local2 index ~/notes")
        if any(folder.is_relative_to(root) for root in roots):
            continue
        if config_dir is None:
            line = f"roots: [{json.dumps(str(folder))}]"
            fail(
                f"{folder} is not among the folders LoCAL2 may read (files.roots)",
                NO_CONFIG_DIR.format(dir=SUGGESTED_CONFIG_DIR, line=line),
            )
        with friendly_errors(f"cannot add {folder} to {config_dir / FILES_YAML}"):
            where, changed = add_root(config_dir, folder)
        if changed:
            err.print(f"Added {folder} to roots in {where}", markup=False, highlight=False)
        roots.append(folder)
        added = True
    if not roots:
        kept = f" (it is added to roots in {config_dir / FILES_YAML})" if config_dir else ""
        fail("no folders to index", f"name one: local2 index ~/notes{kept}")
    return load_settings(config_dir) if added else settings


@runs_app.command("list")
def runs_list(
    ctx: typer.Context,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Only this session.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 30,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Your logged turns, newest first."""
    # lazy: pydantic, charset_normalizer, local2.service: ~161 ms, 109 modules at local2 --help
    from local2.service import own_runs

    settings = settings_of(ctx)
    with friendly_errors(), access_of(settings) as access:
        rows = own_runs(settings, access, person_of(ctx), session, limit)
    if listed_plainly(rows, as_json, "No runs logged yet."):
        return
    table = runs_table(rows)
    # Never narrower than the table's narrowest form (whole ids): a terminal wraps the
    # long lines rather than the table cutting ids; piped output is not cut to 80 columns.
    needed = out.measure(table, options=out.options.update_width(1000)).minimum
    width = max(out.width, needed) if out.is_terminal else max(250, needed)
    (out if width == out.width else Console(width=width, highlight=False)).print(table)


def runs_table(rows: Sequence[AuditRun]) -> Any:
    """The audit log as a table; ids are never cut (they are pasted into `runs show`)."""
    from rich.table import Table  # lazy: rich: ~5 ms, 4 modules at local2 --help

    def widest(key: Literal["session_id", "query_id"]) -> int:
        return max(len(str(r[key] or "")) for r in rows)

    table = Table()
    table.add_column("time", no_wrap=True)
    table.add_column("session", no_wrap=True, min_width=widest("session_id"))
    table.add_column("query id", no_wrap=True, min_width=widest("query_id"))
    table.add_column("model", overflow="fold")
    table.add_column("tools", overflow="fold")
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("query", overflow="fold", ratio=1)
    for r in rows:
        table.add_row(
            str(r["written_at"] or "")[:19],
            str(r["session_id"] or ""),
            str(r["query_id"] or ""),
            str(r["model"] or ""),
            ",".join(str(t) for t in r["tools"]) or "-",
            "-" if r["score"] is None else str(r["score"]),
            Text(r["query"]),
        )
    return table


@runs_app.command("show")
def runs_show(
    ctx: typer.Context,
    query_id: Annotated[str, typer.Argument(help="The turn's query id (or session/query_id).")],
) -> None:
    """One logged turn as JSON."""
    # lazy: pydantic, charset_normalizer, local2.service: ~145 ms, 109 modules at local2 --help
    from local2.service import own_run

    settings = settings_of(ctx)
    with friendly_errors(), access_of(settings) as access:
        record = own_run(settings, access, person_of(ctx), query_id)
    if record is None:
        fail(f"no logged run '{query_id}'", "see `local2 runs list`")
    print(json.dumps(record, indent=2, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    """Add ``index`` and ``runs`` to the main CLI."""
    app.command("index")(index)
    app.add_typer(runs_app, name="runs")
