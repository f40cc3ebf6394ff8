"""``local2 sessions``, ``local2 history``, ``local2 replay`` and ``local2 feedback``: sessions
after the fact, each only the person's own (local's, or ``--as NAME``'s): someone else's
session answers as an unknown one does."""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import closing
from datetime import datetime
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

import local2.cli._gc_pause as gc_pause
from local2.cli._common import (
    BackendOpt,
    JsonOpt,
    ModelOpt,
    SessionArg,
    err,
    fail,
    make_agent,
    offline_agent,
    out,
    person_of,
)
from local2.cli._errors import friendly_errors
from local2.cli._render import listed_plainly, rated


def feedback(
    ctx: typer.Context,
    session_id: SessionArg,
    query_id: Annotated[str, typer.Argument(help="The turn's query id.")],
    rating: Annotated[
        int | None, typer.Option("--rating", "-r", min=1, max=5, help="1 (bad) to 5 (good).")
    ] = None,
    comment: Annotated[str | None, typer.Option("--comment", "-c")] = None,
    prefer: Annotated[
        str | None,
        typer.Option("--prefer", help="For a compared turn: a, b or tie (the arena counts it)."),
    ] = None,
) -> None:
    """Rate a turn, or say which of two compared answers is better.

    A rating is stored on the turn's engram and in the session's state and changes recall
    ranking; a preference continues the conversation from the preferred answer. Memory is
    not opened here: the engram's annotation waits until memory is next opened (a running
    app or API server applies it before its next recall).
    """
    if rating is None and prefer is None:
        fail("Give --rating 1-5, or --prefer a|b|tie for a compared turn.", code=2)
    if prefer is not None and prefer not in ("a", "b", "tie"):
        fail(f"--prefer takes a, b or tie, not {prefer!r}.", code=2)
    with friendly_errors():
        agent = offline_agent(ctx)  # no Chroma: a rating waits for memory (local2.memory.deferred)
        try:
            agent.access.write_session(person_of(ctx), session_id)
            if prefer is not None:
                result = agent.ratings.prefer(session_id, query_id, prefer, comment)
                follows = (
                    f"the conversation continues from {str(result.get('continues')).upper()}"
                    if result["continues_history"]
                    else result["note"]
                )
                out.print(f"Recorded preference {prefer} for {query_id}: {follows}.")
            if rating is not None:
                result = agent.ratings.feedback(session_id, query_id, rating, comment)
                out.print(rated(result))
        finally:
            agent.close()


def history(
    ctx: typer.Context,
    session_id: SessionArg,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 30,
    as_json: JsonOpt = False,
) -> None:
    """A session's checkpoints, newest first: id, step, node, time, next, summary.

    Checkpoints of branches the session no longer continues from (the originals of replays)
    are marked with ○, those left by a turn that was stopped, failed or was killed part-way
    with ✕; pass an id to `local2 replay` to re-run from it.
    """
    with friendly_errors():
        agent = offline_agent(ctx)
        try:
            agent.access.read_session(person_of(ctx), session_id)
            rows = agent.sessions.checkpoints(session_id, limit)
        finally:
            agent.close()
    if as_json:
        print(json.dumps(rows, indent=2, default=str))
        return

    from rich.table import Table  # lazy: rich: ~5 ms, 4 modules at local2 --help

    table = Table(box=None, pad_edge=False)
    table.add_column("")
    table.add_column("checkpoint", no_wrap=True)
    table.add_column("step", justify="right", no_wrap=True)
    table.add_column("node", overflow="fold", min_width=9)
    table.add_column("time", no_wrap=True)
    table.add_column("next", overflow="fold", min_width=9)
    table.add_column("summary", no_wrap=True, overflow="ellipsis", min_width=16, ratio=1)
    for r in rows:
        table.add_row(
            "●" if r["current"] else "[red]✕[/]" if r.get("abandoned") else "[dim]○[/]",
            r["checkpoint_id"],
            str(r["step"]),
            r["node"],
            datetime.fromisoformat(r["created_at"] or "").astimezone().strftime("%m-%d %H:%M:%S"),
            ",".join(r["next"]) or "-",
            Text(r["summary"]),
        )
    # Piped output is not cut to 80 columns: ids must stay whole to be pasted back.
    (out if out.is_terminal else Console(width=200, highlight=False)).print(table)
    err.print(
        "[dim]● the branch the session continues from · ○ another branch · "
        "✕ left by a turn that never finished (not continued from)[/]"
    )


def replay(
    ctx: typer.Context,
    session_id: SessionArg,
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Checkpoint id to re-run from.")],
    query: Annotated[str | None, typer.Option("--query", help="Replace the question.")] = None,
    model: ModelOpt = None,
    backend: BackendOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-run from a checkpoint as a new branch; the original branch stays intact."""
    with friendly_errors():
        agent = make_agent(ctx, backend, model)  # the replay's model: checked before it runs
        gc_pause.resume("replay")
        try:
            agent.access.write_session(person_of(ctx), session_id)
            payload = agent.timetravel.replay(session_id, checkpoint, query=query)
        finally:
            agent.close()
    if as_json:
        print(json.dumps(payload, indent=2, default=str))
        return
    from rich.table import Table  # lazy: rich: ~6 ms, 4 modules at local2 --help

    original: Mapping[str, Any] = payload.get("original") or {}
    table = Table("", "original", "replay")
    table.add_row(
        "question", Text(original.get("query", "(none)")), Text(str(payload.get("query", "")))
    )
    table.add_row("answer", Text(original.get("answer", "(none)")), Text(payload["answer"]))
    was = f"{original['model']} ({original.get('backend')})" if original.get("model") else ""
    table.add_row("model", was, f"{payload.get('model')} ({payload.get('backend')})")
    (out if out.is_terminal else Console(width=160, highlight=False)).print(table)
    out.print(f"New branch checkpoints (newest first): {', '.join(payload['branch'])}")
    err.print(
        "[dim]The session now continues from the new branch; the original branch's "
        f"checkpoints are still listed by `local2 history {session_id}`.[/]"
    )


def sessions(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 20,
    as_json: JsonOpt = False,
    everyone: Annotated[
        bool, typer.Option("--everyone", help="Everyone's (an admin, with --as; audited).")
    ] = False,
) -> None:
    """Your recent sessions, newest first: id, turns, last turn, first question."""
    person = person_of(ctx)
    if everyone and not person.admin:
        fail(
            "Only an admin may list everyone's sessions.",
            "local2 --as ADMIN sessions --everyone (on a shared store with that admin's "
            "token in LOCAL2_TOKEN)",
            code=2,
        )
    with friendly_errors(), closing(offline_agent(ctx)) as agent:
        rows = agent.sessions.recent(limit, agent.access.listing_owner(person, everyone))
    if listed_plainly(
        rows, as_json, "No sessions yet: ask something with local2 ask or local2 chat.", err
    ):
        return

    from rich.table import Table  # lazy: rich: ~20 ms, 4 modules at local2 --help

    table = Table(box=None, pad_edge=False)
    table.add_column("session", no_wrap=True)
    table.add_column("turns", justify="right", no_wrap=True)
    table.add_column("last turn", no_wrap=True)
    table.add_column("first question", no_wrap=True, overflow="ellipsis", ratio=1)
    for r in rows:
        table.add_row(
            r["session_id"],
            str(r["turns"]),
            datetime.fromtimestamp(r["updated_at"]).strftime("%m-%d %H:%M"),
            escape(" ".join(str(r["first"] or "").split())),
        )
    # Piped output is not cut to 80 columns: ids must stay whole to be pasted back.
    (out if out.is_terminal else Console(width=200, highlight=False)).print(table)


def register(app: typer.Typer) -> None:
    app.command()(sessions)
    app.command()(feedback)
    app.command()(history)
    app.command()(replay)
