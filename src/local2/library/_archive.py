"""A library as one zip (``local2 library export|import``): a JSON index of its entries,
their kept texts and their original files, so a person can move it between machines.

    library.json               {"version": 1, "entries": [LibraryEntry, ...]}
    text/<id>.txt              each entry's text as read
    originals/<id>/<name>      a document's original file

Import reads only the members the index names, each within ``documents.max_bytes``, and
files every entry again under the importer's own ids (readings and pins kept). An export
that does not fit in the importer's library (``library.max_mb``, beside what is pinned) is
refused before anything is filed; one that fits may evict the importer's oldest unpinned
entries, as any new entry may, but never an entry the import brought.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any, cast

from local2.contracts import LibraryEntry
from local2.documents import page_sections
from local2.errors import InvalidInput
from local2.library._store import Fetched, Reader, ReadingLibrary, entry_id, is_entry_id

INDEX = "library.json"
VERSION = 1
_MB = 1024 * 1024


def export_library(library: ReadingLibrary, owner: str | None) -> bytes:
    """The person's library as a zip (see the module docstring)."""
    shelf = library.shelf(owner)
    entries = shelf.entries()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(INDEX, json.dumps({"version": VERSION, "entries": entries}, indent=1))
        for entry in entries:
            archive.writestr(f"text/{entry['id']}.txt", shelf.read_text(entry["id"]))
            original = shelf.original_path(entry)
            if original is not None and original.is_file():
                archive.write(original, f"originals/{entry['id']}/{entry['original']}")
    return out.getvalue()


def _bad(why: str) -> InvalidInput:
    return InvalidInput(
        f"Not a library export: {why}.", "Import a zip made by `local2 library export`."
    )


def _member(archive: zipfile.ZipFile, name: str, cap: int) -> bytes | None:
    try:
        info = archive.getinfo(name)
    except KeyError:
        return None
    if info.file_size > cap:
        raise _bad(f"{name} is larger than documents.max_bytes")
    with archive.open(info) as member:
        data = member.read(cap + 1)
    if len(data) > cap:
        raise _bad(f"{name} is larger than documents.max_bytes")
    return data


def import_library(library: ReadingLibrary, owner: str | None, data: bytes) -> list[str]:
    """File every entry of an export in ``owner``'s library; the ids of the entries."""
    cap = library.settings.documents.max_bytes
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise _bad("it is not a zip file") from None
    with archive:
        raw = _member(archive, INDEX, cap)
        try:
            index = json.loads(raw or b"")
        except ValueError:
            raise _bad(f"{INDEX} is missing or not JSON") from None
        if not isinstance(index, dict) or index.get("version") != VERSION:
            raise _bad(f"{INDEX} is not of version {VERSION}")
        items = [
            cast(LibraryEntry, item)
            for item in index.get("entries") or []
            if isinstance(item, dict) and is_entry_id(item.get("id"))
        ]
        _check_room(library, owner, archive, items)
        filed: list[str] = []
        for item in items:  # what this import filed is never evicted to make room for more
            filed.append(_import_one(library, owner, archive, item, cap, frozenset(filed)))
        return filed


def _check_room(
    library: ReadingLibrary, owner: str | None, archive: zipfile.ZipFile, items: list[Any]
) -> None:
    """Refuse, before filing anything, an export that does not fit in the person's library
    beside what is pinned there (``library.max_mb``): filed, it would evict its own entries.
    Entries already in the library (the same content) take no more room."""
    shelf = library.shelf(owner)
    new = 0
    for item in items:
        if shelf.find(entry_id(shelf.key, str(item.get("sha256") or ""))) is not None:
            continue
        names = [f"text/{item['id']}.txt"]
        if item.get("original"):
            names.append(f"originals/{item['id']}/{item['original']}")
        new += sum(_size(archive, name) for name in names)
    pinned = sum(e["bytes"] for e in shelf.entries() if e["pinned"])
    cap = library.cfg.max_mb * _MB
    if new + pinned > cap:
        raise InvalidInput(
            f"This export holds {new / _MB:,.1f} MB new to your library, which may hold "
            f"{library.cfg.max_mb:,} MB (library.max_mb), {pinned / _MB:,.1f} MB of it pinned: "
            "importing it would evict entries it brought. Nothing was imported.",
            "Raise library.max_mb in library.yaml, unpin or remove entries, or import a "
            "smaller export.",
        )


def _size(archive: zipfile.ZipFile, name: str) -> int:
    try:
        return archive.getinfo(name).file_size
    except KeyError:
        return 0


def _import_one(
    library: ReadingLibrary,
    owner: str | None,
    archive: zipfile.ZipFile,
    item: LibraryEntry,
    cap: int,
    spare: frozenset[str],
) -> str:
    text = (_member(archive, f"text/{item['id']}.txt", cap) or b"").decode("utf-8", "replace")
    original = None
    if item.get("original"):
        original = _member(archive, f"originals/{item['id']}/{item['original']}", cap)
    pages = tuple(page_sections(text)) if item.get("pages", 1) > 1 else ()
    fetched = Fetched(
        url=str(item["url"]),
        final_url=str(item.get("final_url") or item["url"]),
        title=str(item.get("title") or ""),
        format=str(item.get("format") or "html"),
        pages=pages or ((1, text),),
        original=original,
    )
    entry = library.keep(fetched, Reader("import", owner=owner), spare)
    merged = _merged(entry, item)
    library.shelf(owner).save(merged)
    return merged["id"]


def _merged(entry: LibraryEntry, item: Any) -> LibraryEntry:
    """The entry with the exported one's readings, pin and first reading added."""
    seen = {(r["at"], r["run_id"], r["session_id"]) for r in entry["readings"]}
    for reading in item.get("readings") or []:
        if (
            isinstance(reading, dict)
            and (
                reading.get("at"),
                reading.get("run_id"),
                reading.get("session_id"),
            )
            not in seen
        ):
            entry["readings"].append(reading)  # type: ignore[arg-type]
    entry["readings"] = [r for r in entry["readings"] if r["by"] != "import"] or entry["readings"]
    entry["readings"].sort(key=lambda r: r["at"])
    entry["pinned"] = entry["pinned"] or bool(item.get("pinned"))
    entry["first_read"] = min(entry["first_read"], float(item.get("first_read") or 1e12))
    entry["cited"] = sum(1 for r in entry["readings"] if r["cited"])
    return entry
