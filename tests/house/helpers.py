"""What the house tests share with the others: the commands of the ``local2`` app."""

from __future__ import annotations

from typing import Any

import typer

from local2.cli._main import app as cli_app


def cli_commands() -> dict[tuple[str, ...], set[str]]:
    """Every command's path (``("memory", "save")``) and its long options."""
    found: dict[tuple[str, ...], set[str]] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, (*path, name))
            return
        found[path] = {
            opt
            for param in command.params
            if param.param_type_name == "option"
            for opt in param.opts
            if opt.startswith("--")
        }

    walk(typer.main.get_command(cli_app), ())
    return found
