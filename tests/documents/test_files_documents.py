"""Documents in the configured folders: indexed page by page, found by search_files with the
file and the page, read by read_file a range of pages at a time; re-indexing reads only what
changed; a long build does not hold a search up; and `local2 index` then `local2 ask` over a
folder of mixed documents, through the real parts."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from local2.documents import page_sections
from local2.errors import ToolError
from local2.files import FileIndex
from local2_testkit import documents as samples
from local2_testkit.hostile_documents import encrypted_pdf
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.documents.helpers import FERRY, MILL, CountingReader, filler, mixed_folder, run, setup
from tests.kit.helpers import local2


def test_a_folder_of_mixed_documents_is_searched_and_hits_name_file_and_page(
    tmp_path: Path,
) -> None:
    _, folders, tools, facts = setup(tmp_path)
    report = folders.index.sync()
    assert report.files == 7 and report.added == 7 and report.skipped == []
    for question, file, page in facts.values():
        result = run(tools["search_files"], query=question, k=3)
        first = result.text.split("\n[1] ", 1)[1].splitlines()[0]
        unit = "slide" if file.endswith(".pptx") else "page"
        assert first.startswith(f"papers/{file}, {unit} {page} (similarity "), result.text
    # The text file keeps its line range; an EPUB's chapters are its pages.
    almanac = run(tools["search_files"], query="herring shoals hawthorn", k=1).text
    assert "papers/almanac.md (lines " in almanac
    epub = samples.epub_sample()
    found = run(tools["search_files"], query=epub.pages[1], k=1).text
    assert "papers/tales.epub, chapter 2 (similarity" in found


def test_read_file_takes_a_page_range_and_says_how_to_read_on(tmp_path: Path) -> None:
    _, _, tools, _ = setup(tmp_path)
    result = run(tools["read_file"], path="report.pdf", pages="3-4")
    header, body = result.text.split("\n---\n", 1)
    assert [n for n, _ in page_sections(body)] == [3, 4]
    assert body.startswith("[Page 3 of 6]\n") and MILL in body
    assert "document: PDF, 6 pages" in header and "pages: 3-4 of 6" in header
    assert '(more: read_file with pages="5-6")' in header
    evidence = result.data["evidence"]
    assert (evidence["first_page"], evidence["last_page"], evidence["pages_full"]) == (3, 4, 6)
    assert result.events == [("file.read", evidence)]
    one = run(tools["read_file"], path="ferry.pptx", pages="2")
    assert "[Slide 2 of 3]\nTimetable\n" + FERRY in one.text and "slides: 2-2 of 3" in one.text
    with pytest.raises(ToolError, match=r'pages must be a page or a range, e.g. "3" or "3-5"'):
        run(tools["read_file"], path="report.pdf", pages="the fourth")
    with pytest.raises(ToolError, match=r"the document has 6 pages"):
        run(tools["read_file"], path="report.pdf", pages="9-10")


def test_read_file_cuts_at_whole_pages_within_max_chars(tmp_path: Path) -> None:
    _, _, tools, _ = setup(tmp_path, max_chars=1200)
    result = run(tools["read_file"], path="report.pdf")
    header, body = result.text.split("\n---\n", 1)
    shown = [n for n, _ in page_sections(body)]
    assert shown[0] == 1 and 1 <= len(shown) < 6 and len(body) <= 1200
    assert result.data["evidence"]["truncated"] is True
    assert f'(more: read_file with pages="{shown[-1] + 1}-6")' in header


def test_reindexing_reads_only_the_documents_that_changed(tmp_path: Path) -> None:
    reader = CountingReader()
    _, folders, _, _ = setup(tmp_path, reader)
    folder = tmp_path / "papers"
    (folder / "locked.pdf").write_bytes(encrypted_pdf())
    first = folders.index.sync()
    assert sorted(reader.names) == sorted(
        [
            "report.pdf",
            "lights.docx",
            "ferry.pptx",
            "notes.odt",
            "tales.epub",
            "wharf.html",
            "locked.pdf",
        ]
    )
    assert first.skipped == [
        "papers/locked.pdf: The PDF is encrypted: it needs a password to open. Save or print "
        "a copy without a password, and use that."
    ]
    reader.names.clear()
    again = folders.index.sync()
    assert reader.names == [] and again.unchanged == 8 and again.added == again.updated == 0
    assert again.skipped == first.skipped  # still said, from what was recorded, not re-read
    pages = [[filler(n)] for n in range(1, 4)]
    pages[1].append("The mill was restored again in 2024.")
    (folder / "report.pdf").write_bytes(samples.pdf_of(pages))
    os.utime(folder / "lights.docx")  # touched, not changed: its hash says so, unread
    third = folders.index.sync()
    assert reader.names == ["report.pdf"]
    assert (third.updated, third.unchanged) == (1, 7)


def test_indexing_reports_progress_over_every_file(tmp_path: Path) -> None:
    _, folders, _, _ = setup(tmp_path)
    seen: list[tuple[int, int, str]] = []
    folders.index.sync(progress=lambda done, total, name: seen.append((done, total, name)))
    assert seen[0][:2] == (0, 7) and seen[-1] == (7, 7, "")
    assert [done for done, _, _ in seen] == list(range(8))
    assert {name for _, _, name in seen[:-1]} == {
        f"papers/{n}" for n in os.listdir(tmp_path / "papers")
    }


def test_a_search_does_not_wait_for_a_long_build(tmp_path: Path) -> None:
    """While the index is built in the background (here held at its first document), a
    search answers from what is indexed and says how far the build has got; the next one,
    after the build, finds the rest."""
    release = threading.Event()
    reader = CountingReader(hold=release)
    _, folders, tools, facts = setup(tmp_path, reader, index_wait_s=0.0)
    try:
        first = run(tools["search_files"], query=facts["mill"][0])
        assert "the file index is being brought up to date" in first.text
        assert reader.started.wait(60)  # the build is at its first document, held there
        assert reader.names == ["ferry.pptx"]  # after almanac.md, the one text file
        second = run(tools["search_files"], query=facts["mill"][0])
        assert "being brought up to date: 1 of 7 files so far" in second.text
    finally:
        release.set()
    builder = folders.index._builder
    assert builder is not None
    builder.join(120)
    later = run(tools["search_files"], query=facts["mill"][0], k=1)
    assert "papers/report.pdf, page 4" in later.text and "being brought up" not in later.text


def test_index_then_ask_over_a_folder_of_documents(tmp_path: Path) -> None:
    """`local2 index` (with its progress bar) then `local2 ask` against the Ollama-protocol
    test server: search_files finds the page, read_file reads it, the answer cites the file
    and the page, and the critic finds nothing unread."""
    folder = tmp_path / "papers"
    mixed_folder(folder)
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "files.yaml").write_text(f"roots: [{folder}]\n")
    (conf / "memory.yaml").write_text("embedder: lexical\n")
    env = {"LOCAL2_HOME": str(tmp_path / "home"), "LOCAL2_CONFIG": str(conf)}
    indexed = local2("index", env=env)
    assert indexed.returncode == 0, indexed.stderr
    assert "Indexing" in indexed.stderr and "7/7" in indexed.stderr
    assert indexed.stdout.startswith("7 files: 7 added, 0 updated, 0 unchanged, 0 removed")
    with FakeOllama(RuleBrain()) as server:
        asked = local2(
            "ask",
            "What do my documents say about when the Eling tidal mill was restored?",
            "--json",
            "--backend",
            "ollama",
            env={**env, "OLLAMA_HOST": server.url},
        )
    assert asked.returncode == 0, asked.stderr
    payload = json.loads(asked.stdout)
    search, read = payload["tool_calls"]
    assert search["tool"] == "search_files" and "papers/report.pdf, page 4" in search["result"]
    assert read["tool"] == "read_file" and read["args"] == {
        "path": "papers/report.pdf",
        "pages": "4",
    }
    assert "[Page 4 of 6]" in read["result"]
    assert "papers/report.pdf, page 4" in payload["answer"] and "1980" in payload["answer"]
    assert payload["critique"]["flags"] == []


def test_the_critic_flags_a_page_of_a_file_that_was_not_read(tmp_path: Path) -> None:
    from local2.critic import grounding_flags

    _, _, tools, _ = setup(tmp_path)
    read = run(tools["read_file"], path="report.pdf", pages="4")
    call = {
        "id": "c",
        "tool": "read_file",
        "args": {"path": "report.pdf", "pages": "4"},
        "result": read.text,
        "error": None,
        "duration_s": 0.1,
    }
    assert grounding_flags("Restored in 1980 (papers/report.pdf, page 4).", [call]) == []
    assert grounding_flags("Restored in 1980 (report.pdf, p. 2).", [call]) == [
        "unread page: report.pdf, page 2 (page 2 was not among the pages read: 4)"
    ]


def test_index_alone_opens_chroma_only_when_asked(tmp_path: Path) -> None:
    """Offering the file tools costs nothing at start: the index opens on the first search."""
    _, folders, _, _ = setup(tmp_path)
    assert folders._index is None
    assert isinstance(folders.index, FileIndex)


def test_the_document_tools_are_read_only_and_say_what_they_return(tmp_path: Path) -> None:
    """What research plans steps over: every tool that reads documents declares it only
    reads, whose text it returns, and whether it returns content or merely names files."""
    from local2.tools._registry import default_tools

    settings, folders, _, _ = setup(tmp_path)
    tools = {t.name: t for t in default_tools(settings, None, folders=folders, mcp=False)}
    known = {
        name: (tools[name].effects, tools[name].output, tools[name].evidence)
        for name in ("web_fetch", "read_file", "search_files", "list_files")
    }
    assert known == {
        "web_fetch": ("read", "untrusted", "content"),
        "read_file": ("read", "private", "content"),
        "search_files": ("read", "private", "listing"),
        "list_files": ("read", "private", "listing"),
    }
    assert tools["web_fetch"].url_arg == "url"
    assert "pages" in tools["read_file"].parameters["properties"]


def test_an_unchanged_file_is_not_even_opened_again(tmp_path: Path, monkeypatch) -> None:
    """Chroma keeps a float to about 7 significant digits: a modification time compared as
    a float read back from it looked changed for some files (their bytes read and hashed at
    every sync). This one's time is such a value; it is compared to the nanosecond."""
    from local2.files._sandbox import Sandbox

    _, folders, _, _ = setup(tmp_path)
    lossy = 1_795_727_710_651_682_100  # 1795727710.6516821 comes back as ...710.651682
    for path in (tmp_path / "papers").iterdir():
        os.utime(path, ns=(lossy, lossy))
    folders.index.sync()
    opened: list[str] = []
    real = Sandbox.read_bytes

    def counted(self: Sandbox, ref: Any) -> bytes:
        opened.append(ref.display)
        return real(self, ref)

    monkeypatch.setattr(Sandbox, "read_bytes", counted)
    again = folders.index.sync()
    assert opened == [] and again.unchanged == 7
