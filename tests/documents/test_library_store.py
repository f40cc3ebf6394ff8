"""The library of what was read (local2.library): kept per person by content, one entry
with many readings, searchable with its page, pinned, evicted, removed for real, exported
and imported."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from local2.errors import InvalidInput, UnknownLibraryEntry
from local2.library import Fetched, Reader, ReadingLibrary, export_library, import_library
from local2.library._store import LibraryIndexes
from local2_testkit import documents as samples
from tests.kit.helpers import make_settings

FACT = "The Eling tidal mill grinds 400 kilograms of flour on a spring tide."


def library(tmp_path: Path, **section: Any) -> ReadingLibrary:
    settings = make_settings(
        tmp_path,
        memory={"embedder": "lexical"},
        files={"embedder": "lexical"},
        library=section,
    )
    return ReadingLibrary(settings)


def page(url: str = "http://example.test/mill", text: str = "Tidal mills of Hampshire.") -> Fetched:
    return Fetched(url, url, "Mills", "html", ((1, text),))


def pdf(url: str = "http://example.test/report.pdf") -> Fetched:
    pages = [[" ".join(samples.sentences(n, 4))] for n in range(1, 8)]
    pages[5].append(FACT)
    data = samples.pdf_of(pages, "Mill report")
    texts = tuple((n, " ".join(p)) for n, p in enumerate(pages, start=1))
    return Fetched(url, url, "Mill report", "pdf", texts, original=data)


def files_of(lib: ReadingLibrary, owner: str) -> list[Path]:
    folder = lib.shelf(owner).folder
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_page_read_by_three_runs_is_one_entry_with_three_readings(tmp_path: Path) -> None:
    lib = library(tmp_path)
    for run in ("run1", "run2", "run3", "run3"):  # run3 reads it twice: still one reading
        lib.keep(page(), Reader("research", run_id=run, owner="alice"))
    [entry] = lib.entries("alice")
    assert [r["run_id"] for r in entry["readings"]] == ["run1", "run2", "run3"]
    assert lib.cite("alice", "run2", {"http://example.test/mill/": [1, 3]}) == 1
    entry = lib.get("alice", entry["id"])
    assert entry["cited"] == 1 and entry["readings"][1]["cited"] == [1, 3]
    lib.keep(page(text="Changed since."), Reader("research", run_id="run4", owner="alice"))
    assert len(lib.entries("alice")) == 2  # the same URL with new content: a new entry


def test_kept_privately_per_person_and_unknown_to_others(tmp_path: Path) -> None:
    lib = library(tmp_path)
    entry = lib.keep(pdf(), Reader("research", run_id="r1", owner="alice"))
    folder = lib.shelf("alice").folder
    assert folder.parent == Path(lib.settings.data_dir) / "library"
    for path in files_of(lib, "alice"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for path in (folder, folder / "entries", folder / "text", folder / "originals"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    assert lib.original("alice", entry["id"]) is not None
    assert lib.entries("bob") == [] and lib.search("bob", FACT) == []
    with pytest.raises(UnknownLibraryEntry):
        lib.get("bob", entry["id"])
    # the same page read by bob is bob's own entry, under another id
    other = lib.keep(pdf(), Reader("research", run_id="r2", owner="bob"))
    assert other["id"] != entry["id"] and lib.get("alice", entry["id"])["readings"][0]["run_id"]


def test_search_finds_a_fact_deep_in_a_kept_pdf_with_its_page(tmp_path: Path) -> None:
    lib = library(tmp_path)
    lib.keep(page(), Reader("chat", session_id="s1", owner="alice"))
    entry = lib.keep(pdf(), Reader("research", run_id="r1", owner="alice"))
    [hit, *_] = lib.search("alice", "how much flour does the tidal mill grind on a spring tide")
    assert hit["source"] == "library" and hit["entry_id"] == entry["id"]
    assert hit["page"] == 6 and hit["path"] == "http://example.test/report.pdf#page=6"
    assert "400 kilograms" in hit["passage"] and hit["runs"] == ["r1"]
    assert FACT in lib.page("alice", entry["id"], 6)["text"]
    assert FACT not in lib.page("alice", entry["id"], 5)["text"]


def test_remove_takes_it_out_of_the_index_and_off_the_disk(tmp_path: Path) -> None:
    lib = library(tmp_path)
    entry = lib.keep(pdf(), Reader("research", run_id="r1", owner="alice"))
    assert files_of(lib, "alice")
    lib.remove("alice", entry["id"])
    assert files_of(lib, "alice") == [] and lib.search("alice", FACT) == []
    index = lib.indexes.of(lib.shelf("alice").key, lib.shelf("alice").folder)
    assert index.count() == 0
    with pytest.raises(UnknownLibraryEntry):
        lib.remove("alice", entry["id"])


def test_over_the_cap_the_oldest_unpinned_go_first(tmp_path: Path) -> None:
    lib = library(tmp_path, max_mb=1)
    big = "word " * 90_000  # 450 kB of text each
    first = lib.keep(page("http://a.test/1", "one " + big), Reader("chat", owner="alice"))
    lib.pin("alice", first["id"])
    second = lib.keep(page("http://a.test/2", "two " + big), Reader("chat", owner="alice"))
    third = lib.keep(page("http://a.test/3", "three " + big), Reader("chat", owner="alice"))
    kept = {e["id"] for e in lib.entries("alice")}
    assert kept == {first["id"], third["id"]} and second["id"] not in kept


def test_export_and_import_move_a_library_between_people(tmp_path: Path) -> None:
    lib = library(tmp_path)
    entry = lib.keep(pdf(), Reader("research", run_id="r1", owner="alice"))
    lib.keep(page(), Reader("chat", session_id="s1", owner="alice"))
    lib.pin("alice", entry["id"])
    data = export_library(lib, "alice")
    moved = library(tmp_path / "elsewhere")
    ids = import_library(moved, "carol", data)
    assert len(ids) == 2 and len(moved.entries("carol")) == 2
    got = next(e for e in moved.entries("carol") if e["format"] == "pdf")
    assert got["pinned"] and [r["run_id"] for r in got["readings"]] == ["r1"]
    assert moved.original("carol", got["id"]) is not None
    assert moved.search("carol", "flour on a spring tide")[0]["page"] == 6
    with pytest.raises(InvalidInput):
        import_library(moved, "carol", b"not a zip")


def test_the_apps_export_is_one_per_person_and_goes_when_old(tmp_path: Path) -> None:
    from local2.ui._library_exports import ExportFiles

    exports = ExportFiles(tmp_path / "served", ttl_s=600)
    first = exports.write("alice", b"one")
    second = exports.write("alice", b"two")  # replaces the first
    bobs = exports.write("bob", b"his")
    assert not first.exists() and exports.files() == sorted([second, bobs])
    assert stat.S_IMODE(second.stat().st_mode) == 0o600 and second.parent.name != "alice"
    old = time.time() - 601
    os.utime(bobs, (old, old))  # as one a stopped server left behind
    ExportFiles(tmp_path / "served", ttl_s=600)  # the next server's start lets it go
    assert exports.files() == [second]
    exports.drop("alice")
    assert exports.files() == []


def test_an_import_that_does_not_fit_is_refused_and_one_that_does_keeps_all_it_brought(
    tmp_path: Path,
) -> None:
    big = "w " * 175_000  # 350 kB of text each: three are over a 1 MB library
    source = library(tmp_path / "from", max_mb=5)
    for n in range(2):
        source.keep(page(f"http://a.test/{n}", f"{n} {big}"), Reader("chat", owner="alice"))
    two = export_library(source, "alice")
    source.keep(page("http://a.test/2", f"2 {big}"), Reader("chat", owner="alice"))
    small = library(tmp_path / "to", max_mb=1)
    with pytest.raises(InvalidInput, match=r"library\.max_mb"):
        import_library(small, "bob", export_library(source, "alice"))
    assert small.entries("bob") == []  # refused before anything was filed
    old = small.keep(page("http://b.test/old", f"old {big}"), Reader("chat", owner="bob"))
    ids = import_library(small, "bob", two)
    # the two it brought are kept; the library's oldest unpinned entry made room
    assert {e["id"] for e in small.entries("bob")} == set(ids) and old["id"] not in ids


def test_settings_of_another_shape_are_another_library_over_the_same_entries(
    tmp_path: Path,
) -> None:
    lexical = {"memory": {"embedder": "lexical"}, "files": {"embedder": "lexical"}}
    off = ReadingLibrary.shared(make_settings(tmp_path, library={"keep": "off"}, **lexical))
    big = make_settings(tmp_path, library={"keep": "all", "max_mb": 5}, **lexical)
    everything = ReadingLibrary.shared(big)
    assert (off.keep_mode(None), everything.keep_mode(None)) == ("off", "all")
    assert everything.cfg.max_mb == 5 and ReadingLibrary.shared(big) is everything
    everything.run_keep["r1"] = "off"  # a run's own keep holds whichever library asks
    assert off.keep_mode("r1") == "off"
    entry = everything.keep(page(), Reader("chat", owner="alice"))
    assert off.get("alice", entry["id"]) == entry


def test_a_listing_does_not_wait_for_indexing(tmp_path: Path, monkeypatch: Any) -> None:
    lib = library(tmp_path)
    release = threading.Event()
    real = LibraryIndexes.add

    def slow(self: LibraryIndexes, *args: Any) -> None:  # indexing takes until released
        release.wait(60)
        real(self, *args)

    monkeypatch.setattr(LibraryIndexes, "add", slow)
    entry = lib.keep(pdf(), Reader("research", run_id="r1", owner="alice"))
    listed: list[Any] = []
    lister = threading.Thread(target=lambda: listed.append(lib.entries("alice")))
    lister.start()
    lister.join(10)  # at once: it reads the disk, it does not wait for the index
    try:
        assert [e["id"] for e in listed[0]] == [entry["id"]]
        assert lib.by_url("alice", "http://example.test/report.pdf#page=2") == entry
    finally:
        release.set()
    assert lib.settle(60) and lib.search("alice", FACT)[0]["entry_id"] == entry["id"]
