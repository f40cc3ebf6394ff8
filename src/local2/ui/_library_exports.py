"""The Library tab's export, as a download that does not outlive its purpose.

An export is the whole of a person's library, removed entries and all as they were when it
was made, so the app keeps at most one per person and not for long:

- written where Gradio serves files from (``GRADIO_TEMP_DIR``, ``<data_dir>/cache/gradio``
  unless the operator named another), so Gradio hands it out in place and makes no copy of
  its own, under ``library-exports/<person>/<random>/library.zip`` (folders 0700, the file
  0600, a name no one can guess);
- replaced by the person's next export, deleted when any entry of theirs is removed (from
  the tab, or over the API of this server: :attr:`ReadingLibrary.forgotten`), and deleted
  :data:`EXPORT_TTL_S` after it was made; one a stopped server left behind goes once it
  is that old, when a server starts or anyone exports.

The zip the CLI writes (``local2 library export FILE``) is the person's own file, where they
said; ``GET /library/export`` streams it and keeps nothing.
"""

from __future__ import annotations

import secrets
import shutil
import threading
import time
from contextlib import suppress
from pathlib import Path

from local2.memory import owner_folder
from local2.storage import private_dir, write_private_bytes

FOLDER = "library-exports"  # under the folder Gradio serves from
NAME = "library.zip"
EXPORT_TTL_S = 600.0  # how long a download of an export is offered


def served_folder() -> Path:
    """Where Gradio serves files from (read when asked: the server sets it before the app)."""
    # lazy: gradio, fastapi: ~4.4 s, 1766 modules at import
    from gradio.utils import get_upload_folder

    return Path(get_upload_folder())


class ExportFiles:
    """Each person's one export file (thread-safe)."""

    def __init__(self, root: Path | None = None, ttl_s: float = EXPORT_TTL_S) -> None:
        self._root = root
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._timers: dict[str, threading.Timer] = {}
        self.sweep()

    @property
    def root(self) -> Path:
        return self._root or served_folder() / FOLDER

    def write(self, person: str, data: bytes) -> Path:
        """``person``'s export, in place of the one before; deleted after :attr:`ttl_s`."""
        key = owner_folder(person)
        self.sweep()
        with self._lock:
            self._drop(key)
            folder = private_dir(self.root / key / secrets.token_hex(16))
            private_dir(self.root)
            private_dir(self.root / key)
            path = write_private_bytes(folder / NAME, data)
            timer = threading.Timer(self.ttl_s, self.drop, args=(person,))
            timer.daemon = True
            self._timers[key] = timer
            timer.start()
        return path

    def drop(self, person: str | None) -> None:
        """Delete ``person``'s export, if there is one."""
        with self._lock:
            self._drop(owner_folder(person))

    def _drop(self, key: str) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        shutil.rmtree(self.root / key, ignore_errors=True)

    def sweep(self) -> None:
        """Delete the exports older than :attr:`ttl_s` (a process that ended left them)."""
        if not self.root.is_dir():
            return
        old = time.time() - self.ttl_s
        for made in self.root.glob(f"*/*/{NAME}"):
            with suppress(OSError):  # gone meanwhile
                if made.stat().st_mtime < old:
                    shutil.rmtree(made.parent, ignore_errors=True)

    def files(self) -> list[Path]:
        """Every export file kept now (whoever's)."""
        return sorted(self.root.glob(f"*/*/{NAME}")) if self.root.is_dir() else []
