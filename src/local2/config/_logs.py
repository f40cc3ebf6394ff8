"""Where log lines go, at the level ``system.log_level`` sets, on every surface.

One handler on the root logger writes to the standard error stream (the one in place when a
line is written, so a test's or a host's redirection holds) and drops every record below the
configured level, whoever made it: some dependencies set their own loggers to DEBUG (bm25s
does, at import), and a record a logger lets through reaches every handler above it, so the
level must be held at the handler. Installed first, it also turns later
``logging.basicConfig`` calls into no-ops (the MCP SDK's server makes one, with a handler
that would let everything through).
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from local2.errors import SettingsError

FORMAT = "%(levelname)s %(name)s: %(message)s"


class ErrorStream(logging.StreamHandler[TextIO]):
    """A handler on whatever ``sys.stderr`` is when a line is written."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # where the base keeps an attribute: the stream of the moment
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:  # the base's __init__ sets it
        pass


def level_of(name: str) -> int:
    """``system.log_level`` (``WARNING``, ``info``, ``30``) as a logging level."""
    text = name.strip()
    if text.isdigit():
        return int(text)
    level = logging.getLevelNamesMapping().get(text.upper())
    if level is not None:
        return level
    raise SettingsError(
        f"system.log_level {name!r} is not a level: use DEBUG, INFO, WARNING, ERROR or CRITICAL."
    )


def quiet_logging(level_name: str) -> int:
    """Log at ``level_name`` and above, to stderr, from here on (again: the level changes);
    returns the level."""
    level = level_of(level_name)
    root = logging.getLogger()
    ours = next((h for h in root.handlers if isinstance(h, ErrorStream)), None)
    if ours is None:
        ours = ErrorStream()
        ours.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(ours)
    ours.setLevel(level)
    root.setLevel(level)
    return level
