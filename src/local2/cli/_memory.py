"""``local2 memory``: save, list, search, delete, export and re-embed what LoCAL2 remembers.

Each command acts on the memory of the person it runs for (:func:`local2.cli._common.person_of`:
local, or ``--as NAME``): their own engrams only. Someone else's engram id is as unknown as
an id that never existed.

``--team`` acts on the team's shared facts instead (:mod:`local2.memory._shelf`): recalled in
everyone's turns, so only local (this terminal without ``--as``) or an admin may save or
delete one (anyone else: exit 2); anyone may list, search and export them. This is the only
way team facts are written: nothing a turn or the model does writes them."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from local2.cli._common import person_of, settings_of
from local2.cli._errors import friendly_errors

if TYPE_CHECKING:
    from rich.table import Table

    from local2.service import MemoryDesk

memory_app = typer.Typer(
    help="Inspect and manage long-term memory (engrams).", no_args_is_help=True
)
console = Console()
notices = Console(stderr=True)  # stdout stays clean for --json


TeamOpt = Annotated[
    bool,
    typer.Option(
        "--team",
        help="The team's shared facts (recalled for everyone) instead of your own memory; "
        "saving or deleting one: local or an admin only.",
    ),
]


@contextmanager
def _desk(ctx: typer.Context, team: bool, doing: str | None = None) -> Iterator[MemoryDesk]:
    """The person's memory (``--team``: the team's facts) through the service, closed after;
    its errors (a team write refused: exit 2) said as such, and a notice about the store
    (a fallback embedder) on stderr."""
    # Imported here: chromadb takes seconds to import, and every `local2` command loads this.
    from local2.service import MemoryDesk

    desk = MemoryDesk(settings_of(ctx), person_of(ctx), team=team)
    try:
        with friendly_errors(doing):
            yield desk
    finally:
        if desk.notice:
            notices.print(f"[yellow]Notice:[/yellow] {desk.notice}")
        desk.close()


def _when(ts: Any) -> str:
    if not isinstance(ts, int | float):
        return "?"
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


# rows: engrams (or hits over them) as memory reads them: id, content and Chroma's metadata
def _table(rows: list[dict[str, Any]], title: str, similarity: bool = False) -> Table:
    from rich.table import Table  # lazy: rich: ~5 ms, 4 modules at local2 --help

    table = Table(title=title, show_lines=False)
    table.add_column("id", style="cyan", no_wrap=True)
    if similarity:
        table.add_column("sim", justify="right")
    table.add_column("kind")
    table.add_column("turn", no_wrap=True)
    table.add_column("created")
    table.add_column("reward", justify="right")
    table.add_column("critic", justify="right")
    table.add_column("content", overflow="fold")
    for row in rows:
        cells = [row["id"]]
        if similarity:
            cells.append(f"{row['similarity']:.2f}")
        said = row["content"].replace("\n", " ")
        content = Text(said if len(said) <= 160 else said[:157] + "...")  # not console markup
        if row.get("superseded_by"):
            content = Text.assemble((f"(superseded by {row['superseded_by']}) ", "dim"), content)
        cells += [
            _kind(row),
            str(row.get("query_id") or "-"),
            _when(row.get("created_at")),
            _fmt(row.get("reward")),
            _fmt(row.get("critic_score")),
            content,
        ]
        table.add_row(*cells)
    return table


def _kind(row: dict[str, Any]) -> str:  # an engram's row, its Chroma metadata beside
    """'fact (user_request)': the kind, and where a fact came from."""
    kind = str(row.get("kind", ""))
    source = row.get("source")
    return f"{kind} ({source})" if kind in ("fact", "saved") and source else kind


@memory_app.command("save")
def save_cmd(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What to remember, e.g. one sentence")],
    team: TeamOpt = False,
) -> None:
    """Remember TEXT: in your own memory, or with --team as a fact shared by the whole team
    (recalled in everyone's turns, marked as a team fact; local or an admin only)."""
    with _desk(ctx, team, "save failed") as desk:
        engram = desk.save(text)
    where = "as a team fact, recalled for everyone" if team else "in your memory"
    console.print(f"saved {engram} {where}")


@memory_app.command("list")
def list_cmd(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many, newest first")] = 50,
    offset: Annotated[int, typer.Option(help="Skip this many newest")] = 0,
    kind: Annotated[
        str | None, typer.Option("--kind", help="Only this kind: fact, episodic or saved")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines instead of a table")] = False,
    team: TeamOpt = False,
) -> None:
    """List memories, newest first: kind, source turn, reward and critic score.

    Facts a newer fact replaced are listed as superseded (kept, but never recalled).
    """
    with _desk(ctx, team, "cannot list memory") as desk:
        rows = desk.engrams(limit=limit, offset=offset, kind=kind)
        total = desk.count()
    if as_json:
        for row in rows:
            typer.echo(json.dumps(row, ensure_ascii=False))
        return
    title = "team facts" if team else "memories"
    console.print(_table(rows, f"{title} ({len(rows)} of {total})"))


@memory_app.command("search")
def search_cmd(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for")],
    k: Annotated[int, typer.Option("--k", "-k", help="How many hits")] = 5,
    include_bad: Annotated[
        bool, typer.Option("--all", help="Include memories rated bad or graded low")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines instead of a table")] = False,
    team: TeamOpt = False,
) -> None:
    """Recall memories for QUERY with the same ranking the model uses: your own and the
    team's facts (kind 'team'), or with --team the team's alone."""
    with _desk(ctx, team, "search failed") as desk:
        hits = desk.search(query, k, include_bad=include_bad)
        if as_json:
            for hit in hits:
                typer.echo(json.dumps(hit, ensure_ascii=False))
            return
        if not hits:
            console.print(f"No memories found for: {query}")
            return
        rows = desk.stored(hits)
    console.print(_table(rows, f"recall: {query}", similarity=True))


@memory_app.command("delete")
def delete_cmd(
    ctx: typer.Context,
    engram_id: Annotated[str, typer.Argument(metavar="ID")],
    team: TeamOpt = False,
) -> None:
    """Forget one memory by id (with --team: a team fact; local or an admin only)."""
    with _desk(ctx, team, "delete failed") as desk:
        deleted = desk.delete(engram_id)
    if not deleted:  # someone else's is not in this person's memory: unknown
        console.print(f"[red]No engram {engram_id}[/red]")
        raise typer.Exit(1)
    console.print(f"deleted {engram_id}")


@memory_app.command("export")
def export_cmd(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="JSON-lines file to write")],
    team: TeamOpt = False,
) -> None:
    """Write every memory (content and metadata) to FILE as JSON lines (--team: the team's
    facts)."""
    with _desk(ctx, team, "export failed") as desk:
        n = desk.export(file)
    console.print(f"exported {n} memories to {file}")


@memory_app.command("reembed")
def reembed_cmd(
    ctx: typer.Context,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Re-embed everything, not only what is missing")
    ] = False,
    team: TeamOpt = False,
) -> None:
    """Bring the configured embedder's collection up to date with every memory.

    Each embedder keeps its own collection; memories saved while another embedder stood in
    (Ollama down) are re-embedded with the configured one. Run it after changing models.
    """
    from rich.progress import Progress  # lazy: rich: ~9 ms, 14 modules at local2 --help

    with (
        _desk(ctx, team, "re-embedding failed") as desk,
        Progress(console=console, transient=True) as progress,
    ):
        task = progress.add_task("re-embedding", total=None)
        done = desk.reembed(
            rebuild,
            progress=lambda n, total: progress.update(task, completed=n, total=total),
        )
    console.print(
        f"re-embedded {done.embedded} memories with {done.embedder} "
        f"({done.stored} in collection {done.collection})"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(memory_app, name="memory")
