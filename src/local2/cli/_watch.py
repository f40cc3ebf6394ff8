"""``local2 watch add|list|show|pause|resume|remove|run|run-due|notices``: questions
researched again on a schedule, at a terminal (local, or ``--as NAME``). See docs/watch.md.

Apprise targets are printed only redacted (the service's views), so nothing a watch's
secrets are in reaches the terminal, a pipe or a log.
"""

from __future__ import annotations

import datetime as dt
import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from local2.cli._common import JsonOpt, err, make_agent, out, person_of, settings_of
from local2.cli._errors import friendly_errors
from local2.cli._render import listed_plainly

if TYPE_CHECKING:
    from collections.abc import Iterator

    from local2.contracts import WatchRunView, WatchView
    from local2.service import WatchDesk

watch_app = typer.Typer(help="Watch a topic: research it on a schedule, told what changed.")
WatchArg = Annotated[str, typer.Argument(help="The watch's id (w-...).")]
NO_WATCHES = 'No watches yet: local2 watch add "QUESTION" --every "every Monday 07:00"'


@contextmanager
def desk_of(ctx: typer.Context) -> Iterator[WatchDesk]:
    # lazy: langgraph, langchain_core, local2.tools: ~1.2 s, 1314 modules at local2 --help
    from local2.service import open_watch_desk

    with friendly_errors():
        desk = open_watch_desk(settings_of(ctx))
        try:
            yield desk
        finally:
            desk.close()


def when(at: float | None) -> str:
    if at is None:
        return "-"
    return dt.datetime.fromtimestamp(at).astimezone().strftime("%Y-%m-%d %H:%M %Z")


def print_watch(watch: WatchView) -> None:
    state = "paused" if watch["paused"] else f"next {when(watch['next_due'])}"
    out.print(Text(f"{watch['watch_id']}  {watch['question']}"))
    out.print(Text(f"  {watch['schedule']} ({watch['timezone']}), {state}"))
    for target in watch["targets"]:
        out.print(Text(f"  tells {target}"))


def run_line(run: WatchRunView) -> Text:
    said = "nothing new" if run["nothing_new"] else ("changes" if run["changes"] else "")
    why = f": {run['error']}" if run["error"] else ""
    return Text(f"{when(run['due'])}  {run['run_id']}  {run['status']} {said}{why}".rstrip())


@watch_app.command("add")
def add(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="What to research each time.")],
    every: Annotated[
        str,
        typer.Option(
            "--every",
            "-e",
            help='When: "every Monday 07:00", "every 6 hours", "30m" or a cron line.',
        ),
    ],
    tz: Annotated[
        str | None, typer.Option("--tz", help="IANA time zone (default: watch.timezone).")
    ] = None,
    notify: Annotated[
        list[str] | None,
        typer.Option("--notify", help="An Apprise URL to tell (repeat for more)."),
    ] = None,
    notify_on: Annotated[
        str, typer.Option("--notify-on", help="changes | always | never.")
    ] = "changes",
    max_rounds: Annotated[int | None, typer.Option("--max-rounds", help="Rounds per run.")] = None,
    sources: Annotated[str, typer.Option("--sources", help="web | library | both.")] = "web",
    keep: Annotated[
        str | None, typer.Option("--keep", help="all | research | off (library.keep).")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Every run: only sources published on or after (2024-03-05, 2024 or "
            "'past year', counted from each run).",
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", help="Every run: only sources published on or before."),
    ] = None,
    domains: Annotated[
        str | None,
        typer.Option("--domains", help="Every run: only sources on these hosts, comma-separated."),
    ] = None,
    exclude_domains: Annotated[
        str | None,
        typer.Option("--exclude-domains", help="Every run: never these hosts, comma-separated."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a watch: checked whole first (schedule, time zone, each Apprise URL, its scope).
    Each run after the first looks first at what appeared since the last one."""
    with desk_of(ctx) as desk:
        watch = desk.add(
            person_of(ctx),
            question,
            every,
            timezone=tz,
            targets=notify or [],
            notify_on=notify_on,
            max_rounds=max_rounds,
            sources=sources,
            keep=keep,
            scope={
                "since": since,
                "until": until,
                "domains": domains,
                "exclude_domains": exclude_domains,
            },
        )
    if as_json:
        print(json.dumps(watch, indent=2, ensure_ascii=False))
    else:
        err.print("[green]added[/]")
        print_watch(watch)


@watch_app.command("list")
def list_watches(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Your watches, the oldest first."""
    with desk_of(ctx) as desk:
        watches = desk.watches(person_of(ctx))
    if not listed_plainly(watches, as_json, NO_WATCHES):
        for watch in watches:
            print_watch(watch)


@watch_app.command("show")
def show(ctx: typer.Context, watch_id: WatchArg, as_json: JsonOpt = False) -> None:
    """A watch with its latest runs and delivery attempts."""
    with desk_of(ctx) as desk:
        detail = desk.show(person_of(ctx), watch_id)
    if as_json:
        print(json.dumps(detail, indent=2, ensure_ascii=False))
        return
    print_watch(detail["watch"])
    out.print("Runs:" if detail["runs"] else "No runs yet.")
    for run in detail["runs"]:
        out.print(Text("  ").append(run_line(run)))
    for d in detail["deliveries"]:
        sent = "sent" if d["ok"] else f"failed: {d['error']}"
        out.print(Text(f"  {when(d['at'])}  {d['target']} try {d['attempt']}: {sent}"))


@watch_app.command("pause")
def pause(ctx: typer.Context, watch_id: WatchArg) -> None:
    """Stop running it until resumed."""
    with desk_of(ctx) as desk:
        desk.pause(person_of(ctx), watch_id)
    err.print(f"[green]paused[/] {watch_id}")


@watch_app.command("resume")
def resume(ctx: typer.Context, watch_id: WatchArg) -> None:
    """Run it again, from its next due time (times missed while paused are not made up)."""
    with desk_of(ctx) as desk:
        watch = desk.resume(person_of(ctx), watch_id)
    err.print(f"[green]resumed[/] {watch_id}: next {when(watch['next_due'])}")


@watch_app.command("remove")
def remove(ctx: typer.Context, watch_id: WatchArg) -> None:
    """Remove it, with its runs' records and notices (the research runs stay)."""
    with desk_of(ctx) as desk:
        desk.remove(person_of(ctx), watch_id)
    err.print(f"[green]removed[/] {watch_id}")


@watch_app.command("run")
def run(
    ctx: typer.Context,
    watch_id: WatchArg,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Model to use.")] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="ollama | embedded | auto.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run it once now, outside its schedule: a research run, then what changed."""
    with desk_of(ctx) as desk:
        desk.own(person_of(ctx), watch_id)  # an unknown id fails before the model opens
        agent = make_agent(ctx, backend, model)
        try:
            ran = desk.run_now(person_of(ctx), watch_id, agent.research)
        finally:
            agent.close()
    if as_json:
        print(json.dumps(ran, indent=2, ensure_ascii=False))
    else:
        out.print(run_line(ran))


@watch_app.command("run-due")
def run_due(
    ctx: typer.Context,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Model to use.")] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="ollama | embedded | auto.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """One pass over everyone's due watches, each due time once (for cron or a systemd timer)."""
    with desk_of(ctx) as desk:
        if not desk.anything_due():  # no model opened for nothing
            ran: list[WatchRunView] = []
        else:
            agent = make_agent(ctx, backend, model)
            try:
                ran = desk.run_due(agent.research)
            finally:
                agent.close()
    if as_json:
        print(json.dumps(ran, indent=2, ensure_ascii=False))
    elif not ran:
        err.print("Nothing was due.")
    for one in [] if as_json else ran:
        out.print(run_line(one))


@watch_app.command("notices")
def notices(
    ctx: typer.Context,
    unread: Annotated[bool, typer.Option("--unread", help="Only the unread ones.")] = False,
    read: Annotated[bool, typer.Option("--read", help="Mark those shown read.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """What your watches told you, newest first."""
    with desk_of(ctx) as desk:
        found = desk.notices(person_of(ctx), unread=unread)
        if read:
            desk.mark_read(person_of(ctx), [n["notice_id"] for n in found])
    if as_json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return
    if not found:
        out.print("No notices.")
    for n in found:
        mark = "*" if n["unread"] else " "
        out.print(Text(f"{mark} {when(n['created_at'])}  {n['title']}\n{n['body']}\n"))


def register(app: typer.Typer) -> None:
    """Add ``watch`` to the main CLI."""
    app.add_typer(watch_app, name="watch")
