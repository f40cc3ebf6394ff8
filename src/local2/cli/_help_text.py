"""Help a person can read: no Python types, and sentences that are not cut at line ends.

Typer's own help names each option's Python type (``--help <bool>``, ``--json <bool>``,
``--attach <list[Path]>``) and keeps a docstring's line breaks inside a paragraph. Here a
flag shows no value, a value shows what to type (``TEXT``, ``N``, ``NUMBER``, ``PATH``,
``DATE``, or its choices), an argument its name (``QUESTION``), and each paragraph is one
paragraph. It is applied once to the whole command tree, as the root group is made.
"""

from __future__ import annotations

import inspect
import re
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

import typer
from typer.core import TyperArgument, TyperGroup, TyperOption


def _value_name(param: TyperArgument | TyperOption) -> str:
    """What to type for ``param``, from the annotation Typer keeps (``type_descriptor``)."""
    described = getattr(param, "type_descriptor", None)
    if described is None:
        return "TEXT"
    if described.choices is not None:
        return "|".join(str(getattr(c, "value", c)) for c in described.choices)
    if described.is_path or described.is_file:
        return "PATH"
    annotation = described.annotation
    if described.is_list and get_args(annotation):
        annotation = get_args(annotation)[0]
    names = {int: "N", float: "NUMBER", datetime: "DATE", Path: "PATH"}
    return names.get(annotation, "TEXT") if isinstance(annotation, type) else "TEXT"


def _metavar(param: TyperArgument | TyperOption) -> str | None:
    if param.metavar is not None:
        return param.metavar
    if isinstance(param, TyperArgument):
        return (param.name or "value").upper()
    if param.is_flag or param.count:
        return ""  # a switch takes no value
    return _value_name(param)


def _no_type(ctx: typer.Context) -> None:
    return None


def reflowed(text: str | None) -> str | None:
    """``text`` with each paragraph's line breaks turned into spaces (a ``\\b`` paragraph,
    click's mark for one laid out by hand, is kept as it is)."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else re.sub(r"\s*\n\s*", " ", p) for p in paragraphs)


def plain_help(command: typer.core.TyperCommand | TyperGroup) -> None:
    """Give every parameter of ``command`` and its subcommands a metavar a person reads,
    and reflow their help."""
    for param in command.params:
        if isinstance(param, TyperArgument):
            # Its name is shown already; Typer would add its Python type beside it.
            setattr(param, "display_type_rich", _no_type)  # noqa: B010  # a method, per param
        if isinstance(param, TyperArgument | TyperOption):
            param.metavar = _metavar(param)
        if isinstance(param, TyperOption):
            param.help = reflowed(param.help)
    # --help is made when first asked for, and kept: make it now, a switch like the others.
    helper = command.get_help_option(typer.Context(command))
    if helper is not None:
        helper.metavar = ""
    command.help = reflowed(command.help)
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


class PlainHelpGroup(TyperGroup):
    """The root group: its whole tree gets :func:`plain_help` once it is built."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_help(self)
