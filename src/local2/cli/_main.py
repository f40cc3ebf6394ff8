"""``local2``: the command line. Every failure is one readable message and a non-zero exit.

Start-up matters here (``bench/startup.py``): this module imports only typer and rich;
settings, the agent and everything heavy are imported inside the commands that use them.
Started as the program, it first pauses the cyclic garbage collector for the imports
(:mod:`local2.cli._gc_pause`); commands that keep running resume it once they are set up.

Each command group is a module with ``register(app)``; this one only assembles them.
"""

from __future__ import annotations

import os
import sys

import local2.cli._gc_pause as gc_pause

# Started as the program (`local2 ...`), not imported by a test.
if os.path.basename(sys.argv[0]) == "local2":
    gc_pause.pause()  # before the imports below

from pathlib import Path
from typing import Annotated

import typer

import local2.cli._compare as compare
import local2.cli._doctor as doctor
import local2.cli._documents as documents
import local2.cli._evals as evals
import local2.cli._files as files
import local2.cli._library as library
import local2.cli._mcp as mcp
import local2.cli._memory as memory
import local2.cli._research as research
import local2.cli._search as search
import local2.cli._serve as serve
import local2.cli._sessions as sessions
import local2.cli._stories as stories
import local2.cli._turns as turns
import local2.cli._users as users
import local2.cli._watch as watch
from local2.cli._common import fail
from local2.cli._errors import friendly_errors
from local2.cli._help_text import PlainHelpGroup
from local2.cli._people import act_as
from local2.errors import SettingsError

app = typer.Typer(
    name="local2",
    help="LoCAL2: a local research assistant you can see inside.",
    cls=PlainHelpGroup,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version  # lazy: stdlib: ~16 ms, 33 modules at local2 --help

        print(f"local2 {version('local2')}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Config directory (default: $LOCAL2_CONFIG)."),
    ] = None,
    as_name: Annotated[
        str | None,
        typer.Option(
            "--as",
            metavar="NAME",
            help="Act for this person (default: local). On a SQLite or memory store; on "
            "Postgres only with an admin's token in $LOCAL2_TOKEN (the read is logged).",
        ),
    ] = None,
    _: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_version
        ),
    ] = False,
) -> None:
    # lazy: pydantic, yaml, local2.config: ~85 ms, 70 modules at local2 --help
    from local2.config import config_dir_from_env, load_settings, quiet_logging

    try:
        ctx.obj = {"settings": load_settings(config), "config_dir": config_dir_from_env(config)}
        quiet_logging(ctx.obj["settings"].system.log_level)
    except SettingsError as exc:
        fail(f"Configuration error: {exc}")
    if as_name is not None:
        with friendly_errors():
            ctx.obj["person"] = act_as(ctx.obj["settings"], as_name)


for _group in (
    turns,
    doctor,
    sessions,
    memory,
    serve,
    stories,
    files,
    documents,
    library,
    compare,
    research,
    watch,
    search,
    evals,
    users,
    mcp,
):
    _group.register(app)
