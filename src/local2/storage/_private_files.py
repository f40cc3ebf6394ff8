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
    return write_private_bytes(path, text.encode("utf-8"))


def write_private_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` as a file only this user can read, in a private folder:
    whole or not at all (written beside it, then renamed over it)."""
    folder = private_dir(path.parent)
    fd, staging = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.")  # made 0600
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.chmod(staging, FILE_MODE)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    return path


def claim_private(folder: Path, name: str) -> Path:
    """A new, empty file only this user can read in the private ``folder``, named ``name``
    or, when that is taken, ``name (2)``, ``name (3)``...: made exclusively, so two
    processes never claim one name."""
    private_dir(folder)
    stem, suffix = Path(name).stem, Path(name).suffix
    for n in range(1, 10_000):
        candidate = folder / (name if n == 1 else f"{stem} ({n}){suffix}")
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            continue
        os.close(fd)
        return candidate
    raise FileExistsError(f"no free name for {name} in {folder}")


def keep_newest(directory: Path, pattern: str, count: int) -> None:
    """Remove all but the ``count`` most recently written files matching ``pattern``: a
    cache of derived files (prompt states, built graphs) that stays a few copies large."""
    dated = []
    for file in directory.glob(pattern):
        try:
            dated.append((file.stat().st_mtime_ns, file))
        except OSError:  # removed meanwhile by another process, or not ours to read
            continue
    for _, old in sorted(dated, reverse=True)[count:]:
        old.unlink(missing_ok=True)
