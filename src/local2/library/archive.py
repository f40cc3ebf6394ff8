"""A library as one zip (``local2 library export|import``): a JSON index of its entries,
their kept texts and their original files, so a person can move it between machines.

    library.json               {"version": 1, "entries": [LibraryEntry, ...]}
    text/<id>.txt              each entry's text as read
    originals/<id>/<name>      a document's original file

Import reads only the members the index names, each within ``documents.max_bytes``, and
files every entry again under the importer's own ids (readings and pins kept).
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any, cast

from local2.contracts import LibraryEntry
from local2.documents import page_sections
from local2.errors import InvalidInput
from local2.library.kept import Fetched, Reader
from local2.library.shelf import is_entry_id
from local2.library.store import ReadingLibrary

INDEX = "library.json"
VERSION = 1


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
        return [
            _import_one(library, owner, archive, cast(LibraryEntry, item), cap)
            for item in index.get("entries") or []
            if isinstance(item, dict) and is_entry_id(item.get("id"))
        ]


def _import_one(
    library: ReadingLibrary,
    owner: str | None,
    archive: zipfile.ZipFile,
    item: LibraryEntry,
    cap: int,
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
    entry = library.keep(fetched, Reader("import", owner=owner))
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
