"""The search_files index: chunking, recall@3 on a generated corpus, incremental updates."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from local2.files._index import FileIndex, chunk_text
from local2.memory._embedders import LexicalEmbedder, MiniLMEmbedder, minilm_available
from tests.documents.helpers import make_corpus, open_index, recall_at_k
from tests.kit.helpers import make_settings


def test_chunks_keep_line_ranges_and_prefer_paragraph_ends() -> None:
    text = (
        "".join(f"line {n}\n" for n in range(1, 11))
        + "\n"
        + "".join(f"more {n}\n" for n in range(12, 20))
    )
    chunks = chunk_text(text, max_lines=20, max_chars=10_000)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 11), (12, 19)]
    assert chunks[1].text.startswith("more 12\n")
    small = chunk_text("".join(f"{n}\n" for n in range(1, 8)), max_lines=3, max_chars=10_000)
    assert [(c.start_line, c.end_line) for c in small] == [(1, 3), (4, 6), (7, 7)]
    capped = chunk_text("a" * 60 + "\n" + "b" * 60 + "\n", max_lines=40, max_chars=100)
    assert [(c.start_line, c.end_line) for c in capped] == [(1, 1), (2, 2)]
    assert chunk_text("\n\n  \n", 40, 1000) == []


def test_lexical_recall_at_3_on_planted_facts(tmp_path: Path) -> None:
    queries = make_corpus(tmp_path / "notes")
    index = open_index(tmp_path, tmp_path / "notes", LexicalEmbedder())
    steps: list[tuple[int, int]] = []
    report = index.sync(progress=lambda done, total, _: steps.append((done, total)))
    assert report.files == 60 and report.added == 60 and report.chunks >= 60
    assert steps[0] == (0, 60) and steps[-1] == (60, 60)
    score = recall_at_k(index, queries)
    print(f"\nrecall@3 lexical: {score:.2f} over {len(queries)} planted facts")
    assert score >= 0.7


@pytest.mark.slow
@pytest.mark.skipif(not minilm_available(), reason="MiniLM not installed")
def test_minilm_recall_at_3_on_planted_facts(tmp_path: Path) -> None:
    queries = make_corpus(tmp_path / "notes")
    index = open_index(tmp_path, tmp_path / "notes", MiniLMEmbedder())
    started = time.monotonic()
    index.sync()
    built = time.monotonic() - started
    score = recall_at_k(index, queries)
    print(f"\nrecall@3 MiniLM: {score:.2f} over {len(queries)} facts; built in {built:.1f}s")
    assert score >= 0.9


def test_incremental_reindex_after_edit(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    make_corpus(root)
    index = open_index(tmp_path, root, LexicalEmbedder())
    index.sync()
    (root / "garden.md").write_text("# Garden\n\nThe garden budget was cut to 800 euros.\n")
    (root / "boiler.md").unlink()
    (root / "new-car.md").write_text("# Car\n\nThe new car is a blue hatchback.\n")
    touched = root / "notes-001.md"
    touched.write_text(touched.read_text())  # same content, new mtime: not re-embedded
    calls: list[int] = []
    original = index.embedder.embed_documents

    def counting(texts: Any) -> Any:
        calls.append(len(texts))
        return original(texts)

    index.embedder.embed_documents = counting  # type: ignore[method-assign]
    report = index.sync()
    assert (report.added, report.updated, report.removed) == (1, 1, 1)
    assert report.unchanged == 58
    assert sum(calls) == 2, "only the edited and the new file are embedded"
    [top] = index.search("garden budget euros", 1)
    assert top.path == "notes/garden.md" and "800 euros" in top.text and "1200" not in top.text
    assert not any(h.path.endswith("boiler.md") for h in index.search("boiler Hearthwell", 5))
    again = index.sync()
    assert again.unchanged == 60 and again.added == again.updated == again.removed == 0


def test_index_persists_and_rebuild_starts_over(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    make_corpus(root, n_filler=5)
    open_index(tmp_path, root, LexicalEmbedder()).sync()
    reopened = open_index(tmp_path, root, LexicalEmbedder())
    assert reopened.count() > 0
    assert reopened.sync().unchanged == 15
    rebuilt = reopened.sync(rebuild=True)
    assert rebuilt.added == 15 and rebuilt.unchanged == 0


def test_changing_embedder_rebuilds_instead_of_mixing(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    make_corpus(root, n_filler=3)
    open_index(tmp_path, root, LexicalEmbedder(512)).sync()
    other = open_index(tmp_path, root, LexicalEmbedder(256))
    assert other.count() == 0
    assert other.sync().added == 13
    assert other.collection.metadata["embedder"] == "lexical-hash-256"


def test_hits_outside_the_current_sandbox_are_dropped(tmp_path: Path) -> None:
    notes, work = tmp_path / "notes", tmp_path / "work"
    make_corpus(notes, n_filler=3)
    work.mkdir()
    (work / "salary.md").write_text("# Salary\n\nThe salary review is in October.\n")
    both = make_settings(tmp_path, files={"roots": [str(notes), str(work)]})
    FileIndex(both, embedder=LexicalEmbedder()).sync()
    only_notes = open_index(tmp_path, notes, LexicalEmbedder())
    assert both.files.roots[1].name == "work"
    hits = only_notes.search("salary review October", 5)
    assert not any("salary" in h.text for h in hits)
    assert all(h.path.startswith("notes/") for h in hits)
    assert FileIndex(both, embedder=LexicalEmbedder()).search("salary review", 1)[0].path == (
        "work/salary.md"
    )
    assert only_notes.search("garden budget", 1)[0].path == "notes/garden.md"


def test_binary_and_oversized_files_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "ok.md").write_text("# Fine\n\nplain words\n")
    (root / "blob.md").write_bytes(b"\x00\x01\x02" * 100)
    (root / "huge.txt").write_text("word " * 1000)
    index = open_index(tmp_path, root, LexicalEmbedder(), max_bytes=2000)
    report = index.sync()
    assert report.added == 1
    assert sorted(s.split(":")[0] for s in report.skipped) == ["notes/blob.md", "notes/huge.txt"]
