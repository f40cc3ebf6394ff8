"""Folders and files only the server's own user can read (folders 0700, files 0600).

What a person made (a research report, the app's copies of downloads and uploads) is kept
under the data directory in these, never in a folder the machine's other users share, and
its modes do not depend on the umask of whoever started the server.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """``path`` as a folder only this user can open (made if missing, narrowed if not)."""
    path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    os.chmod(path, FOLDER_MODE)
    return path


def write_private(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (UTF-8) as a file only this user can read, in a private
    folder: whole or not at all (written beside it, then renamed over it)."""
    folder = private_dir(path.parent)
    fd, staging = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.")  # made 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(staging, FILE_MODE)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    return path
