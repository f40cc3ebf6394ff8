"""``local2 library list|search|show|remove|pin|export|import``: the library of what was
read, at a terminal (local, or ``--as NAME``). See docs/library.md."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from local2.cli._common import JsonOpt, err, fail, out, person_of, settings_of
from local2.cli._errors import friendly_errors
from local2.contracts import LibraryEntry, LibraryHit

if TYPE_CHECKING:
    from rich.table import Table

    from local2.service import LibraryDesk

library_app = typer.Typer(help="The library of what was read: kept, searched, exported.")
EntryArg = Annotated[str, typer.Argument(help="The entry's id (lib-...).")]


def desk_of(ctx: typer.Context) -> LibraryDesk:
    # lazy: pydantic, charset_normalizer, local2.service: ~109 ms, 109 modules at local2 --help
    from local2.service import open_library

    return open_library(settings_of(ctx))


def when(at: float) -> str:
    return dt.datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M")


def size(n: int) -> str:
    return f"{n / 1024:,.0f} KB" if n >= 1024 else f"{n} B"


def entries_table(entries: list[LibraryEntry]) -> Table:
    from rich.table import Table  # lazy: rich: ~5 ms, 4 modules at local2 --help

    table = Table()
    for name in ("id", "title", "site", "read", "size", "cited", "pin"):
        table.add_column(name, overflow="fold", no_wrap=name == "id")
    for e in entries:
        table.add_row(
            e["id"],
            Text(e["title"]),
            Text(e["site"]),
            f"{when(e['last_read'])} ({len(e['readings'])}x)",
            size(e["bytes"]),
            str(e["cited"]),
            "yes" if e["pinned"] else "",
        )
    return table


@library_app.command("list")
def list_entries(
    ctx: typer.Context,
    limit: Annotated[int | None, typer.Option("--limit", "-n", help="At most this many.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Your library, the last read first."""
    with friendly_errors():
        entries = desk_of(ctx).entries(person_of(ctx), limit)
    if as_json:
        print(json.dumps(entries, indent=2, ensure_ascii=False))
    elif not entries:
        out.print("Nothing kept yet: research runs keep what they read (library.keep).")
    else:
        out.print(entries_table(entries))


def hit_text(n: int, hit: LibraryHit) -> str:
    page = f", page {hit['page']}" if hit["page"] else ""
    runs = f" by run {', '.join(hit['runs'])}" if hit["runs"] else ""
    head = f"[{n}] {hit['title']} ({hit['entry_id']}{page}, read {when(hit['read_at'])}{runs})"
    return f"{head}\n    {hit['path']}\n    {' '.join(hit['passage'].split())[:400]}"


@library_app.command("search")
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int | None, typer.Option("--k", "-k", help="Most passages.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Passages of your library that answer QUERY, best first."""
    with friendly_errors():
        hits = desk_of(ctx).search(person_of(ctx), query, k)
    if as_json:
        print(json.dumps(hits, indent=2, ensure_ascii=False))
        return
    if not hits:
        out.print(f"Nothing in your library for: {query}")
    for n, hit in enumerate(hits, start=1):
        out.print(hit_text(n, hit), markup=False, highlight=False)


@library_app.command("show")
def show(
    ctx: typer.Context,
    entry_id: EntryArg,
    page: Annotated[int | None, typer.Option("--page", "-p", help="Only this page.")] = None,
    text: Annotated[bool, typer.Option("--text", help="Print the kept text only.")] = False,
) -> None:
    """One entry as JSON, with its kept text (``--text``: the text alone)."""
    with friendly_errors():
        found = desk_of(ctx).page(person_of(ctx), entry_id, page)
    if text:
        print(found["text"])
    else:
        print(json.dumps(found, indent=2, ensure_ascii=False))


@library_app.command("remove")
def remove(ctx: typer.Context, entry_ids: Annotated[list[str], typer.Argument()]) -> None:
    """Remove entries: from your index and from disk."""
    with friendly_errors():
        desk = desk_of(ctx)
        for entry_id in entry_ids:
            entry = desk.remove(person_of(ctx), entry_id)
            err.print(f"[green]removed[/] {entry['id']}: {entry['title']}")


@library_app.command("pin")
def pin(
    ctx: typer.Context,
    entry_id: EntryArg,
    off: Annotated[bool, typer.Option("--off", help="Unpin it.")] = False,
) -> None:
    """Pin an entry: never evicted when the library is over library.max_mb."""
    with friendly_errors():
        entry = desk_of(ctx).pin(person_of(ctx), entry_id, not off)
    err.print(f"[green]{'pinned' if entry['pinned'] else 'unpinned'}[/] {entry['id']}")


@library_app.command("export")
def export(
    ctx: typer.Context, to: Annotated[Path, typer.Argument(help="The zip to write.")]
) -> None:
    """Your library as one zip: library.json, the kept texts and the original files."""
    with friendly_errors():
        data = desk_of(ctx).export(person_of(ctx))
    to.write_bytes(data)
    to.chmod(0o600)  # what was read is the person's own
    err.print(f"[green]exported[/] {size(len(data))} to {to}")


@library_app.command("import")
def import_(
    ctx: typer.Context, source: Annotated[Path, typer.Argument(help="A library export (zip).")]
) -> None:
    """File the entries of a library export in yours."""
    if not source.is_file():
        fail(f"no file {source}", "give the zip `local2 library export` wrote")
    with friendly_errors():
        ids = desk_of(ctx).import_(person_of(ctx), source.read_bytes())
    err.print(f"[green]imported[/] {len(ids)} entries")


def register(app: typer.Typer) -> None:
    """Add ``library`` to the main CLI."""
    app.add_typer(library_app, name="library")
