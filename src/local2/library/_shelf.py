"""Each person's library on disk: one folder of theirs, readable by the server's user only.

    <base>/<person>/entries/<id>.json      what the entry is, its readings (0600)
    <base>/<person>/text/<id>.txt          its text as read, a document's pages marked
    <base>/<person>/originals/<id>/<name>  a document's original file

``<base>`` is ``library.dir`` or ``<data_dir>/library``; ``<person>`` is the folder name of
:func:`local2.memory.owner_folder` (``local``, or a key ending in a hash), as for documents.
Nothing here knows another person's folder: an id not among theirs is unknown, whoever's.
"""

from __future__ import annotations

import json
import re
import shutil
from contextlib import suppress
from pathlib import Path
from typing import cast

from local2.contracts import LibraryEntry
from local2.errors import UnknownLibraryEntry
from local2.memory import owner_folder
from local2.storage import private_dir, write_private, write_private_bytes

ID = re.compile(r"^lib-[0-9a-f]{12}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


def is_entry_id(value: object) -> bool:
    return isinstance(value, str) and ID.fullmatch(value) is not None


def original_name(url: str, fmt: str) -> str:
    """A safe file name for a document's original, from its URL, ending in its format."""
    base = url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    stem = _UNSAFE.sub("_", base).strip(" ._")[:80] or "document"
    suffix = f".{fmt}"
    return stem if stem.lower().endswith(suffix) else f"{Path(stem).stem or stem}{suffix}"


class Shelf:
    """One person's entries, text and originals (no index: :mod:`._store` keeps it beside)."""

    def __init__(self, base: Path, owner: str | None) -> None:
        self.owner = owner
        self.key = owner_folder(owner)
        self.folder = base / self.key

    def record_path(self, entry_id: str) -> Path:
        return self.folder / "entries" / f"{entry_id}.json"

    def text_path(self, entry_id: str) -> Path:
        return self.folder / "text" / f"{entry_id}.txt"

    def original_path(self, entry: LibraryEntry) -> Path | None:
        if not entry["original"]:
            return None
        return self.folder / "originals" / entry["id"] / entry["original"]

    def entries(self) -> list[LibraryEntry]:
        """The person's entries, the last read first."""
        found = []
        for path in (self.folder / "entries").glob("lib-*.json"):
            with suppress(OSError, ValueError):
                found.append(cast(LibraryEntry, json.loads(path.read_text(encoding="utf-8"))))
        found.sort(key=lambda e: (-e["last_read"], e["id"]))
        return found

    def find(self, entry_id: str) -> LibraryEntry | None:
        path = self.record_path(entry_id)
        if not is_entry_id(entry_id) or not path.is_file():
            return None
        return cast(LibraryEntry, json.loads(path.read_text(encoding="utf-8")))

    def get(self, entry_id: str) -> LibraryEntry:
        """The entry ``entry_id`` of this person's; :class:`UnknownLibraryEntry` for any other."""
        found = self.find(entry_id)
        if found is None:
            raise UnknownLibraryEntry(
                f"No entry '{entry_id}' in your library.",
                "List yours with `local2 library list` or GET /library.",
            )
        return found

    def save(self, entry: LibraryEntry) -> None:
        private_dir(self.folder.parent)
        private_dir(self.folder)
        write_private(self.record_path(entry["id"]), json.dumps(entry, ensure_ascii=False))

    def write_text(self, entry_id: str, text: str) -> Path:
        private_dir(self.folder)
        return write_private(self.text_path(entry_id), text)

    def write_original(self, entry: LibraryEntry, data: bytes) -> None:
        path = self.original_path(entry)
        if path is not None:
            private_dir(self.folder)
            private_dir(path.parent.parent)
            write_private_bytes(path, data)

    def read_text(self, entry_id: str) -> str:
        try:
            return self.text_path(entry_id).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def drop(self, entry_id: str) -> None:
        """Remove the entry's record, text and original from disk."""
        self.record_path(entry_id).unlink(missing_ok=True)
        self.text_path(entry_id).unlink(missing_ok=True)
        shutil.rmtree(self.folder / "originals" / entry_id, ignore_errors=True)
