"""Adding a folder to ``files.roots`` in a config directory's ``files.yaml``, for
``local2 index FOLDER``.

The file is the person's: it is edited as text, one line changed or added, so that its
comments and layout stay as they were; a file whose ``roots`` cannot be edited that way (or
that does not read back with the folder in it) is left untouched and the error says what to
write, and where.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from local2.errors import SettingsError

FILES_YAML = "files.yaml"
_FLOW = re.compile(r"^roots:[ \t]*\[[^\]\n]*\](?P<note>[ \t]*(?:#[^\n]*)?)$", re.M)
_EMPTY = re.compile(r"^roots:[ \t]*(?:null|~)?(?P<note>[ \t]*(?:#[^\n]*)?)$", re.M)


def _roots(text: str, where: Path) -> list[str]:
    try:
        data: Any = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise SettingsError(f"{where}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{where}: expected a mapping of settings")
    roots = data.get("roots") or []
    if not isinstance(roots, list):
        raise SettingsError(f"{where}: key 'roots' must be a list of folders")
    return [str(r) for r in roots]


def _flow(roots: list[str]) -> str:
    return "roots: [" + ", ".join(json.dumps(r) for r in roots) + "]"


def _with_root(text: str, roots: list[str], folder: str) -> str | None:
    """``text`` with ``folder`` added to its roots, or None when its ``roots`` is written in
    a way this does not edit (a block list spread over lines)."""
    line = _flow([*roots, folder])
    if not re.search(r"^roots\s*:", text, re.M):
        return f"{text.rstrip()}\n{line}\n" if text.strip() else f"{line}\n"
    for shape in (_FLOW, _EMPTY):
        if shape.search(text):
            return shape.sub(lambda m: line + m.group("note"), text, count=1)
    return None


def add_root(config_dir: Path, folder: Path) -> tuple[Path, bool]:
    """Add ``folder`` (absolute) to ``roots`` in ``config_dir``'s files.yaml, creating the
    file if there is none: ``(the file, whether it changed)``."""
    where = config_dir / FILES_YAML
    text = where.read_text(encoding="utf-8") if where.is_file() else ""
    roots = _roots(text, where)
    wanted = str(folder)
    if wanted in roots or any(Path(r).expanduser().resolve() == folder for r in roots):
        return where, False
    edited = _with_root(text, roots, wanted)
    if edited is None or wanted not in _roots(edited, where):
        raise SettingsError(
            f"{where}: its roots could not be edited here; add {json.dumps(wanted)} to the "
            "list under `roots:` yourself"
        )
    where.write_text(edited, encoding="utf-8")
    return where, True
