"""``local2 documents add|list|show|attach|remove``: the person's own documents at a
terminal (local, or ``--as NAME``), and what ``local2 ask --attach FILE`` does first.

A document added is read, kept under the data directory and indexed: ``search_files`` and
``read_file`` find it in every session of the person's (as ``my-documents/<name>``); one
attached to a session (``--session``) is also searched for each of that session's
questions. Nothing of a document that cannot be read, or is over a limit, is kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from local2.cli._common import JsonOpt, err, fail, out, person_of, settings_of
from local2.cli._errors import friendly_errors
from local2.cli._people import access_of
from local2.cli._render import listed_plainly
from local2.contracts import DocumentRecord, Person

if TYPE_CHECKING:
    from rich.table import Table

    from local2.service import DocumentDesk

documents_app = typer.Typer(help="Your own documents: added, searched in your sessions.")

FileArg = Annotated[
    list[Path],
    typer.Argument(help="PDF, DOCX, PPTX, ODT, EPUB, HTML, Markdown or text files."),
]
SessionAttach = Annotated[
    str | None,
    typer.Option("--session", "-s", help="Attach to this session: searched for its questions."),
]


@contextmanager
def desk_of(ctx: typer.Context) -> Iterator[DocumentDesk]:
    """The person's documents, with no agent opened (no model is needed to keep them)."""
    # lazy: pydantic, charset_normalizer, local2.service: ~187 ms, 109 modules at local2 --help
    from local2.service import open_desk

    settings = settings_of(ctx)
    with friendly_errors(), access_of(settings) as access:
        yield open_desk(settings, access)


def add_files(
    desk: DocumentDesk, person: Person, paths: list[Path], session_id: str | None
) -> list[DocumentRecord]:
    """Add each file (attached to ``session_id``), saying so on stderr; a file that cannot
    be read stops the command with why (those added before it stay)."""
    added = []
    for path in paths:
        if not path.is_file():
            fail(f"no file {path}", "give the path of a document to add")
        record = desk.add(person, path.name, path.read_bytes(), session_id)
        added.append(record)
        where = f", attached to session {session_id}" if session_id else ""
        err.print(f"[green]added[/] {describe(record)}{where}")
    return added


def describe(record: DocumentRecord) -> str:
    """``report.pdf (PDF, 12 pages) as doc-1f2e...: my-documents/report.pdf``."""
    count = record["pages"]
    return (
        f"{record['name']} ({record['format'].upper()}, {count} page{'s' if count != 1 else ''})"
        f" as {record['id']}: {record['path']}"
    )


@documents_app.command("add")
def add(
    ctx: typer.Context, files: FileArg, session: SessionAttach = None, as_json: JsonOpt = False
) -> None:
    """Add documents of yours (read, kept and indexed now)."""
    with desk_of(ctx) as desk:
        added = add_files(desk, person_of(ctx), files, session)
    if as_json:
        print(json.dumps(added, indent=2, ensure_ascii=False))


@documents_app.command("list")
def list_documents(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Your documents, newest first."""
    with desk_of(ctx) as desk:
        records = desk.records(person_of(ctx))
    if not listed_plainly(records, as_json, "No documents yet: local2 documents add FILE"):
        out.print(documents_table(records))


def documents_table(records: list[DocumentRecord]) -> Table:
    from rich.table import Table  # lazy: rich: ~5 ms, 4 modules at local2 --help

    table = Table()
    table.add_column("id", no_wrap=True)
    table.add_column("name", overflow="fold")
    table.add_column("format")
    table.add_column("pages", justify="right")
    table.add_column("size", justify="right")
    table.add_column("sessions", overflow="fold")
    for r in records:
        table.add_row(
            r["id"],
            Text(r["name"]),
            r["format"].upper(),
            str(r["pages"]),
            f"{r['bytes'] / 1024:,.0f} KB",
            ", ".join(r["sessions"]) or "-",
        )
    return table


@documents_app.command("show")
def show(ctx: typer.Context, doc_id: Annotated[str, typer.Argument(help="Its id.")]) -> None:
    """One of your documents, as JSON."""
    with desk_of(ctx) as desk:
        record = desk.get(person_of(ctx), doc_id)
    print(json.dumps(record, indent=2, ensure_ascii=False))


@documents_app.command("attach")
def attach(
    ctx: typer.Context,
    doc_id: Annotated[str, typer.Argument(help="Its id.")],
    session: Annotated[str, typer.Option("--session", "-s", help="The session.")],
) -> None:
    """Attach one of your documents to a session of yours."""
    with desk_of(ctx) as desk:
        record = desk.attach(person_of(ctx), doc_id, session)
    err.print(f"[green]attached[/] {describe(record)} to session {session}")


@documents_app.command("remove")
def remove(ctx: typer.Context, doc_id: Annotated[str, typer.Argument(help="Its id.")]) -> None:
    """Remove one of your documents (its file, its passages, its record)."""
    with desk_of(ctx) as desk:
        record = desk.remove(person_of(ctx), doc_id)
    err.print(f"[green]removed[/] {describe(record)}")


def register(app: typer.Typer) -> None:
    """Add ``documents`` to the main CLI."""
    app.add_typer(documents_app, name="documents")
