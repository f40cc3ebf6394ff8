"""``local2 memory``: save, list, search, delete, export and re-embed what LoCAL2 remembers.

Each command acts on the memory of the person it runs for (:func:`local2.cli.common.person_of`:
local, or ``--as NAME``): their own engrams only. Someone else's engram id is as unknown as
an id that never existed.

``--team`` acts on the team's shared facts instead (:mod:`local2.memory.team`): recalled in
everyone's turns, so only local (this terminal without ``--as``) or an admin may save or
delete one (anyone else: exit 2); anyone may list, search and export them. This is the only
way team facts are written: nothing a turn or the model does writes them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from local2.cli.common import fail, person_of, settings_of
from local2.cli.errors import friendly_errors
from local2.contracts.people import TEAM_NAME, may_write_team_facts

if TYPE_CHECKING:
    from rich.table import Table

    from local2.service import EngramStore

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


def _owner(ctx: typer.Context, team: bool, writing: bool = False) -> str:
    """Whose memory the command acts on: the person's own, or with ``--team`` the team's
    (a write there refused, exit 2, unless the person is local or an admin)."""
    person = person_of(ctx)
    if not team:
        return person.name
    if writing and not may_write_team_facts(person):
        fail(
            f"Only local (this terminal without --as) or an admin may change the team's "
            f"shared facts: they are recalled in everyone's turns, and '{person.name}' is "
            "not an admin.",
            "Run it without --as, or --as an admin (local2 users add NAME --admin); or "
            "leave out --team to keep it in your own memory.",
            code=2,
        )
    return TEAM_NAME


def _open(ctx: typer.Context, owner: str | None = None) -> EngramStore:
    # Imported here: chromadb takes seconds to import, and every `local2` command loads this.
    from local2.service import EngramStore

    with friendly_errors("cannot open memory"):
        # No background re-embedding in a short command: `reembed` does it, and so does the
        # next `local2 ui`/`serve`/`chat`.
        store = EngramStore.open(settings_of(ctx), sync="no", owner=owner or person_of(ctx).name)
    if store.notice:
        notices.print(f"[yellow]Notice:[/yellow] {store.notice}")
    return store


def _team_beside(store: EngramStore) -> EngramStore | None:
    """The team's facts beside the person's own ``store`` when there are any (never created
    by looking), as every turn's recall has them."""
    from local2.service import EngramStore, TeamFacts

    def team() -> EngramStore:
        return EngramStore.open(
            store.settings, store.embedder, sync="no", owner=TEAM_NAME, owns_embedder=False
        )

    return TeamFacts(store.settings, team).recallable()


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
    table.add_column("turn", no_wrap=True)
    table.add_column("created")
    table.add_column("reward", justify="right")
    table.add_column("critic", justify="right")
    table.add_column("content", overflow="fold")
    for row in rows:
        cells = [row["id"]]
        if similarity:
            cells.append(f"{row['similarity']:.2f}")
        content = row["content"].replace("\n", " ")
        if row.get("superseded_by"):
            content = f"[dim](superseded by {row['superseded_by']})[/dim] {content}"
        cells += [
            _kind(row),
            str(row.get("query_id") or "-"),
            _when(row.get("created_at")),
            _fmt(row.get("reward")),
            _fmt(row.get("critic_score")),
            content if len(content) <= 160 else content[:157] + "...",
        ]
        table.add_row(*cells)
    return table


def _kind(row: dict[str, Any]) -> str:
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
    from local2.service import TEAM_SOURCE

    if not text.strip():
        fail("Nothing to save: TEXT is empty.", 'e.g. local2 memory save "..."', code=2)
    owner = _owner(ctx, team, writing=True)
    store = _open(ctx, owner)
    with friendly_errors("save failed"):
        engram = store.save(text, session_id="", query_id="")
        source = TEAM_SOURCE if team else "cli"
        store.mark(engram, source=source, written_by=person_of(ctx).name)
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
    store = _open(ctx, _owner(ctx, team))
    rows = store.list(limit=limit, offset=offset, kind=kind)
    if as_json:
        for row in rows:
            typer.echo(json.dumps(row, ensure_ascii=False))
        return
    title = "team facts" if team else "memories"
    console.print(_table(rows, f"{title} ({len(rows)} of {store.count()})"))


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
    from local2.service import TEAM_KIND, as_team, recall_with_team

    store = _open(ctx, _owner(ctx, team))
    with friendly_errors("search failed"):
        shared = None if team else _team_beside(store)
        hits = recall_with_team(store, shared, query, k, include_bad=include_bad)
        if team:
            hits = as_team(hits)
    if as_json:
        for hit in hits:
            typer.echo(json.dumps(hit, ensure_ascii=False))
        return
    if not hits:
        console.print(f"No memories found for: {query}")
        return
    rows = [
        {**((shared if h["kind"] == TEAM_KIND and shared else store).get(h["id"]) or {}), **h}
        for h in hits
    ]
    console.print(_table(rows, f"recall: {query}", similarity=True))


@memory_app.command("delete")
def delete_cmd(
    ctx: typer.Context,
    engram_id: Annotated[str, typer.Argument(metavar="ID")],
    team: TeamOpt = False,
) -> None:
    """Forget one memory by id (with --team: a team fact; local or an admin only)."""
    store = _open(ctx, _owner(ctx, team, writing=True))
    if not store.delete(engram_id):  # someone else's is not in this store: unknown
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
    n = _open(ctx, _owner(ctx, team)).export(file)
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
    from rich.progress import Progress

    from local2.service import EngramStore

    settings = settings_of(ctx)
    owner = _owner(ctx, team, writing=True)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("re-embedding", total=None)
        with friendly_errors("re-embedding failed"):
            store, n = EngramStore.reembed(
                settings,
                owner=owner,
                rebuild=rebuild,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
    console.print(
        f"re-embedded {n} memories with {store.embedder.name} "
        f"({store.count()} in collection {store.collection.name})"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(memory_app, name="memory")
