"""``local2 users add|list|remove|rotate|reads``: the people of a team server.

Each person has a token of their own, kept only as a hash in the conversation store
(:mod:`local2.storage._people`). ``add`` and ``rotate`` print it once, as the last line of
their output and alone on it (``TOKEN=$(local2 users add alice)`` takes just the token: what
is said around it goes to stderr). Nothing else ever shows it: not ``list``, not a log.
With nobody added, LoCAL2 is one person's as it always was.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from local2.cli._common import err, out, settings_of
from local2.cli._errors import friendly_errors
from local2.cli._people import people_of
from local2.errors import InvalidInput

if TYPE_CHECKING:
    from local2.storage import People

T = TypeVar("T")

users_app = typer.Typer(
    help="People on a team server: their tokens, admins, and admins' reads.",
    no_args_is_help=True,
)
NameArg = Annotated[str, typer.Argument(help="The person's name, e.g. alice or alice@example.org.")]


@contextmanager
def _people(ctx: typer.Context, create: bool = False) -> Iterator[People | None]:
    """The store's people (closed after); errors become a message and an exit code."""

    settings = settings_of(ctx)
    with friendly_errors():
        if create and settings.system.checkpointer == "memory":
            raise InvalidInput(
                "system.checkpointer is memory: a person added now would be forgotten when "
                "this command ends.",
                "Keep people where the conversations are: checkpointer: sqlite (the default) "
                "or postgres in system.yaml.",
            )
        with people_of(settings, create) as people:
            yield people


def _in_store(ctx: typer.Context, act: Callable[[People], T]) -> T:
    with _people(ctx, create=True) as people:
        assert people is not None  # created
        return act(people)


def _when(stamp: float | None) -> str:
    return datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M") if stamp else "-"


def _give(token: str) -> None:
    """The token, alone on the last line (after everything said on stderr)."""
    sys.stderr.flush()
    print(token, flush=True)


@users_app.command("add")
def add(
    ctx: typer.Context,
    name: NameArg,
    admin: Annotated[
        bool, typer.Option("--admin", help="May read everyone's things (each read is logged).")
    ] = False,
) -> None:
    """Add a person and print their token (shown this once; give it to them)."""
    token = _in_store(ctx, lambda people: people.add(name, admin=admin))
    role = "an admin" if admin else "a person"
    err.print(f"Added {name} as {role}. Their token, shown only this once (give it to them):")
    err.print(
        "[dim]They send it as 'Authorization: Bearer <token>' (the app asks for it to sign "
        "in); a lost token is replaced with: local2 users rotate " + name + "[/]"
    )
    _give(token)


@users_app.command("rotate")
def rotate(ctx: typer.Context, name: NameArg) -> None:
    """Give a person a new token (printed once); the old one stops working at once."""
    token = _in_store(ctx, lambda people: people.rotate(name))
    err.print(f"New token for {name}; the old one no longer works. Shown only this once:")
    _give(token)


@users_app.command("remove")
def remove(ctx: typer.Context, name: NameArg) -> None:
    """Remove a person: their token stops working; what they own stays theirs."""
    _in_store(ctx, lambda people: people.remove(name))
    out.print(
        f"Removed {name}: their token no longer works. Their sessions, runs and memories "
        f"are kept (an admin can still read them); local2 users add {name} gives them back."
    )


@users_app.command("list")
def list_people(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Everyone added, by name: admin or not, when added, when their token last changed."""
    with _people(ctx) as people:
        rows = people.list() if people is not None else []
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        err.print(
            "Nobody added: LoCAL2 is one person's (local). Add people with: local2 users add NAME"
        )
        return
    _table(
        ("name", "admin", "added", "token changed"),
        [
            (r["name"], "yes" if r["admin"] else "", _when(r["created_at"]), _when(r["rotated_at"]))
            for r in rows
        ],
    )


@users_app.command("reads")
def reads(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What admins read of other people's things (sessions, runs, `--as`), newest first."""
    with _people(ctx) as people:
        rows = people.admin_reads(limit) if people is not None else []
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        err.print("No admin has read anyone else's things.")
        return
    _table(
        ("time", "admin", "read", "item", "owner"),
        [(_when(r["created_at"]), r["admin"], r["kind"], r["item"], r["owner"]) for r in rows],
    )


def _table(columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    from rich.table import Table  # lazy: rich: ~4 ms, 4 modules at local2 --help

    table = Table(box=None, pad_edge=False)
    for column in columns:
        table.add_column(column, no_wrap=True)
    for row in rows:
        table.add_row(*(escape(str(cell)) for cell in row))
    # Piped output is not cut to 80 columns: names and ids stay whole.
    (out if out.is_terminal else Console(width=200, highlight=False)).print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(users_app, name="users")
