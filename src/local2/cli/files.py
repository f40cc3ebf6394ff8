"""``local2 index`` (build the search_files index) and ``local2 runs list|show`` (audit log)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

if TYPE_CHECKING:
    from local2.config import Settings

console = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
runs_app = typer.Typer(help="The audit log: every turn, its tools, evidence and answer.")


def _settings(ctx: typer.Context) -> Settings:
    from local2.config import Settings, load_settings

    obj = ctx.obj if isinstance(ctx.obj, dict) else {}
    found = obj.get("settings")
    return found if isinstance(found, Settings) else load_settings()


def _fail(message: str, fix: str = "") -> None:
    err.print(f"[bold red]Error:[/] {message}")
    if fix:
        err.print(f"[yellow]Fix:[/] {fix}")
    raise typer.Exit(1)


def index(
    ctx: typer.Context,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Drop the index and embed every file again.")
    ] = False,
) -> None:
    """Index the allowed folders (files.roots) for search_files; only changed files re-embed."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from local2.errors import EmbeddingError
    from local2.files.index import FileIndex

    settings = _settings(ctx)
    if not settings.files.roots:
        _fail("no folders to index", "add folders to `roots:` in files.yaml, e.g. roots: [~/notes]")
    try:
        idx = FileIndex(settings)
    except (EmbeddingError, OSError) as exc:
        _fail(f"cannot open the file index: {exc}")
    if not idx.sandbox.roots:
        _fail(
            "none of the configured roots is an existing folder: "
            + ", ".join(str(r) for r in settings.files.roots)
        )
    columns = (
        TextColumn("[bold]Indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", style="dim"),
    )
    try:
        with Progress(*columns, console=err, transient=False) as bar:
            task = bar.add_task("", total=None)

            def step(done: int, total: int, current: str) -> None:
                bar.update(task, completed=done, total=total, description=current)

            report = idx.sync(rebuild=rebuild, progress=step)
    except EmbeddingError as exc:
        _fail(f"embedding failed: {exc}")
    console.print(
        f"{report.files} files: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.removed} removed; {report.chunks} chunks "
        f"with {idx.embedder.name} in {report.seconds:.1f}s"
    )
    for line in report.skipped:
        err.print(f"[yellow]skipped[/] {line}")


@runs_app.command("list")
def runs_list(
    ctx: typer.Context,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Only this session.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 30,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Logged turns, newest first."""
    from local2.storage.audit_log import list_runs

    rows = list_runs(_settings(ctx), session, limit)
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        console.print("No runs logged yet.")
        return
    table = runs_table(rows)
    # Never narrower than the table's narrowest form (whole ids): a terminal wraps the
    # long lines rather than the table cutting ids; piped output is not cut to 80 columns.
    needed = console.measure(table, options=console.options.update_width(1000)).minimum
    width = max(console.width, needed) if console.is_terminal else max(250, needed)
    (console if width == console.width else Console(width=width, highlight=False)).print(table)


def runs_table(rows: list[dict[str, Any]]) -> Any:
    """The audit log as a table; ids are never cut (they are pasted into `runs show`)."""
    from rich.table import Table

    def widest(key: str) -> int:
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
            r["query"],
        )
    return table


@runs_app.command("show")
def runs_show(
    ctx: typer.Context,
    query_id: Annotated[str, typer.Argument(help="The turn's query id (or session/query_id).")],
) -> None:
    """One logged turn as JSON."""
    from local2.storage.audit_log import show_run

    record: dict[str, Any] | None = show_run(_settings(ctx), query_id)
    if record is None:
        _fail(f"no logged run '{query_id}'", "see `local2 runs list`")
    print(json.dumps(record, indent=2, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    """Add ``index`` and ``runs`` to the main CLI."""
    app.command("index")(index)
    app.add_typer(runs_app, name="runs")
