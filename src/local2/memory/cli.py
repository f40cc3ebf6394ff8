"""``local2 memory``: list, search, delete, export and re-embed what LoCAL2 remembers."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

if TYPE_CHECKING:
    from rich.table import Table

    from local2.config import Settings
    from local2.memory.store import EngramStore

memory_app = typer.Typer(
    help="Inspect and manage long-term memory (engrams).", no_args_is_help=True
)
console = Console()


def _settings(ctx: typer.Context) -> Settings:
    from local2.config import Settings, load_settings

    obj = ctx.obj if isinstance(ctx.obj, dict) else {}
    settings = obj.get("settings")
    return settings if isinstance(settings, Settings) else load_settings()


def _open(ctx: typer.Context) -> EngramStore:
    # Imported here: chromadb takes seconds to import, and every `local2` command loads this.
    from local2.memory.embeddings import EmbeddingError
    from local2.memory.store import EngramStore, MemoryStoreError

    try:
        return EngramStore.open(_settings(ctx))
    except (MemoryStoreError, EmbeddingError, OSError) as exc:
        console.print(f"[red]cannot open memory:[/red] {exc}")
        raise typer.Exit(1) from None


def _when(ts: Any) -> str:
    if not isinstance(ts, int | float):
        return "?"
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _table(rows: list[dict[str, Any]], title: str, similarity: bool = False) -> Table:
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    table.add_column("id", style="cyan", no_wrap=True)
    if similarity:
        table.add_column("sim", justify="right")
    table.add_column("kind")
    table.add_column("created")
    table.add_column("reward", justify="right")
    table.add_column("critic", justify="right")
    table.add_column("content", overflow="fold")
    for row in rows:
        cells = [row["id"]]
        if similarity:
            cells.append(f"{row['similarity']:.2f}")
        content = row["content"].replace("\n", " ")
        cells += [
            str(row.get("kind", "")),
            _when(row.get("created_at")),
            _fmt(row.get("reward")),
            _fmt(row.get("critic_score")),
            content if len(content) <= 160 else content[:157] + "...",
        ]
        table.add_row(*cells)
    return table


@memory_app.command("list")
def list_cmd(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many, newest first")] = 50,
    offset: Annotated[int, typer.Option(help="Skip this many newest")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines instead of a table")] = False,
) -> None:
    """List memories, newest first, with their reward and critic score."""
    store = _open(ctx)
    rows = store.list(limit=limit, offset=offset)
    if as_json:
        for row in rows:
            typer.echo(json.dumps(row, ensure_ascii=False))
        return
    console.print(_table(rows, f"memories ({len(rows)} of {store.count()})"))


@memory_app.command("search")
def search_cmd(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for")],
    k: Annotated[int, typer.Option("--k", "-k", help="How many hits")] = 5,
    include_bad: Annotated[
        bool, typer.Option("--all", help="Include memories rated bad or graded low")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines instead of a table")] = False,
) -> None:
    """Recall memories for QUERY with the same ranking the model uses."""
    from local2.memory.embeddings import EmbeddingError

    store = _open(ctx)
    try:
        hits = store.recall(query, k, include_bad=include_bad)
    except EmbeddingError as exc:
        console.print(f"[red]search failed:[/red] {exc}")
        raise typer.Exit(1) from None
    if as_json:
        for hit in hits:
            typer.echo(json.dumps(hit, ensure_ascii=False))
        return
    if not hits:
        console.print(f"No memories found for: {query}")
        return
    rows = [{**(store.get(h["id"]) or {}), **h} for h in hits]
    console.print(_table(rows, f"recall: {query}", similarity=True))


@memory_app.command("delete")
def delete_cmd(ctx: typer.Context, engram_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Forget one memory by id."""
    if not _open(ctx).delete(engram_id):
        console.print(f"[red]no memory with id {engram_id}[/red]")
        raise typer.Exit(1)
    console.print(f"deleted {engram_id}")


@memory_app.command("export")
def export_cmd(
    ctx: typer.Context, file: Annotated[Path, typer.Argument(help="JSON-lines file to write")]
) -> None:
    """Write every memory (content and metadata) to FILE as JSON lines."""
    n = _open(ctx).export(file)
    console.print(f"exported {n} memories to {file}")


@memory_app.command("reembed")
def reembed_cmd(ctx: typer.Context) -> None:
    """Re-embed every memory with the configured embedder (after changing models)."""
    from local2.memory.embeddings import EmbeddingError
    from local2.memory.store import EngramStore, MemoryStoreError

    settings = _settings(ctx)
    try:
        store, n = EngramStore.reembed(settings)
    except (MemoryStoreError, EmbeddingError, OSError) as exc:
        console.print(f"[red]re-embedding failed:[/red] {exc}")
        raise typer.Exit(1) from None
    console.print(f"re-embedded {n} memories with {store.embedder.name}")
