"""Hybrid search over the person's own text, through the real parts: BM25 and vectors fused
(each hit says why it was found), the passage that answers as the excerpt (with its page),
the BM25 side kept up to date file by file, `local2 index` then `local2 search` on a mixed
folder, search_files in an agent turn against the Ollama-protocol test server, and a
person's document on a team Chroma server found for them and never for another person."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import local2.cli._memory as memory_commands
import local2.cli._search as search_commands
import local2.files._index as index_module
import local2.files._index as lexical
from local2.cli._main import main as cli_main
from local2.cli._search import why
from local2.contracts._people import Person
from local2.files import FileIndex, Folders, SearchHit
from local2.memory._embedders import LexicalEmbedder
from local2.service.desks._search import Searcher, open_searcher
from local2.tools._files import hit_line
from local2_testkit import documents as samples
from local2_testkit.ollama_server import FakeOllama, RuleBrain
from tests.kit.helpers import local2, make_settings

# A fact no model knows, at the end of a long paragraph of a PDF's page 3: past the first
# lines of its chunk, so only the passage that answers shows it.
VALVE = "The Kestrel valve on the north loop is rated for 412 kPa."
LANTERN = "The Hurst lighthouse lantern burns paraffin from October to March."
ALMANAC = "Almanac note: herring shoals arrive when the hawthorn blossoms."


def filler(seed: int, count: int = 5) -> str:
    return " ".join(samples.sentences(seed, count))


def mixed_folder(root: Path) -> None:
    """A PDF (the valve fact deep in page 3), a DOCX and a Markdown note."""
    root.mkdir(parents=True, exist_ok=True)
    pages = [[filler(n)] for n in range(1, 6)]
    pages[2] = [f"{filler(30, 9)} {VALVE}"]
    (root / "plant.pdf").write_bytes(samples.pdf_of(pages, "Plant report"))
    (root / "lights.docx").write_bytes(
        samples.docx_of([[filler(11)], [filler(12), LANTERN], [filler(13)]])
    )
    (root / "almanac.md").write_text(f"# Almanac\n\n{filler(41)}\n\n{ALMANAC}\n")


def indexed_folder(tmp_path: Path) -> dict[str, str]:
    """The mixed folder, configured (lexical embedder) and indexed by `local2 index`: the
    environment that runs `local2` over it."""
    folder = tmp_path / "papers"
    mixed_folder(folder)
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "files.yaml").write_text(f"roots: [{folder}]\n")
    (conf / "memory.yaml").write_text("embedder: lexical\n")
    env = {"LOCAL2_HOME": str(tmp_path / "home"), "LOCAL2_CONFIG": str(conf)}
    indexed = local2("index", env=env)
    assert indexed.returncode == 0, indexed.stderr
    assert indexed.stdout.startswith("3 files: 3 added")
    return env


def lexical_index(tmp_path: Path, root: Path, **files: Any) -> FileIndex:
    files = {"roots": [str(root)], "embedder": "lexical", **files}
    return FileIndex(make_settings(tmp_path, files=files), embedder=LexicalEmbedder())


def test_a_hit_says_why_it_was_found_and_shows_the_passage_that_answers(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    long = " ".join(samples.sentences(7, 12))
    (root / "pump.md").write_text(f"# Pump house\n\n{long} {VALVE}\n")
    (root / "garden.md").write_text("The garden budget for 2025 is 1200 euros.\n")
    index = lexical_index(tmp_path, root)
    index.sync()
    hits = index.search("What pressure is the Kestrel valve rated for?", 2)
    top = hits[0]
    assert top.path.endswith("pump.md")
    assert top.bm25_rank == 1 and top.vector_rank is not None and top.score > 0
    assert not top.text.startswith(VALVE[:20]) and VALVE in top.text  # deep in its chunk
    assert VALVE in top.passage and len(top.passage) <= 360
    assert top.passage != " ".join(top.text.split())[:360]  # not the chunk's first lines


def test_the_files_the_best_hits_name_are_followed_unless_notes_do_not_link(
    tmp_path: Path,
) -> None:
    """A bridge question: its words find the film's note; the actor's note, which shares
    none of them, comes up because the film's note names it by its title (notes that link
    by name, ``files.link_notes``, on by default; off, no link is followed)."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "The Velvet Letter.md").write_text(
        "# The Velvet Letter\n\nThe Velvet Letter is a 1948 mystery film. Konrad Quenholby "
        "was played by Felix Kelsorby, in her first leading role.\n"
    )
    (root / "Felix Kelsorby.md").write_text(
        "# Felix Kelsorby\n\nA Belgian stage performer. She grew up in Oskpelmere.\n"
    )
    for n in range(8):
        (root / f"Other film {n}.md").write_text(f"{filler(60 + n)} A mystery film.\n")
    (root / "Report.md").write_text(f"{filler(70)}\n")
    question = "In which town was the actor who played Konrad Quenholby in The Velvet Letter born?"
    plain = lexical_index(tmp_path / "plain", root, link_notes=False)  # no link followed
    plain.sync()
    assert all(h.linked_rank is None for h in plain.search(question, 10))
    index = lexical_index(tmp_path, root)
    index.sync()
    hits = index.search(question, 3)
    names = [Path(h.path).name for h in hits]
    assert names[0] == "The Velvet Letter.md" and "Felix Kelsorby.md" in names
    linked = hits[names.index("Felix Kelsorby.md")]
    assert linked.linked_rank == 1 and linked.linked_from == "notes/The Velvet Letter.md"
    assert "named by notes/The Velvet Letter.md" in hit_line(linked)  # what search_files says
    # What `local2 search`, GET /search and the MCP search tool show: the same why.
    found = Searcher(Folders(index.settings, index=index)).search(
        Person("local"), question, "files", 3
    )
    felix = next(h for h in found["hits"] if h["path"].endswith("Felix Kelsorby.md"))
    assert (felix["why"]["linked_rank"], felix["why"]["linked_from"]) == (
        1,
        "notes/The Velvet Letter.md",
    )
    assert "linked from notes/The Velvet Letter.md" in why(felix)
    # A one-word title starting a sentence is no link: "Report" is not Report.md.
    assert index.lexical.linked("Report on the harbour. A Report named.") == [
        index.lexical.linked("named Report")[0]
    ]
    assert index.lexical.linked("Report on the harbour.") == []


@pytest.fixture(params=["embedded", "server"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """Where the index lives: ``<data_dir>/file_index``, or the team's Chroma server."""
    if request.param == "embedded":
        return {}
    server = request.getfixturevalue("chroma_server")
    return {"memory": {"chroma_url": server.url}}


def tokenising(monkeypatch: pytest.MonkeyPatch, root: Path) -> list[str]:
    """The files under ``root`` whose chunks are tokenised from now on, as they are (only
    those: a library indexing in its own thread, left by an earlier test in this process,
    tokenises its files meanwhile)."""
    tokenised: list[str] = []
    real = lexical.chunk_terms

    def spied(text: str, meta: dict[str, Any]) -> list[str]:
        if Path(meta["file"]).is_relative_to(root):
            tokenised.append(meta["rel"])
        return real(text, meta)

    monkeypatch.setattr(lexical, "chunk_terms", spied)
    return tokenised


def test_the_bm25_side_is_kept_beside_the_index_and_read_again_file_by_file(
    tmp_path: Path, where: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second process reads the terms the first wrote, tokenising nothing (and, beside an
    embedded index, the BM25 index the first built at the end of its sync); a sync tokenises
    only the file that changed, and the second process, at its next search, reads only the
    files changed or removed (and the BM25 index that sync built)."""
    root = tmp_path / "notes"
    root.mkdir()
    for n in range(6):
        (root / f"note{n}.md").write_text(f"{filler(n)}\n")
    files = {"roots": [str(root)], "index_collection": f"files-{uuid.uuid4().hex[:8]}"}
    settings = make_settings(tmp_path, files=files, **where)
    writer = FileIndex(settings, embedder=LexicalEmbedder())
    writer.sync()
    tokenised = tokenising(monkeypatch, root)
    built: list[int] = []

    class Counted(lexical.Bm25):
        def __init__(self, documents: Any, *, k1: float, b: float) -> None:
            built.extend([len(documents)] if documents else [])
            super().__init__(documents, k1=k1, b=b)

    monkeypatch.setattr(lexical, "Bm25", Counted)
    reader = FileIndex(settings, embedder=LexicalEmbedder())  # another process
    assert reader.search(filler(3)[:60], 1)[0].path.endswith("note3.md")
    assert tokenised == []  # read back, not tokenised again
    assert built == ([6] if where else [])  # on a server, each process builds its own
    loads: list[int] = []
    real_load = reader.terms.load
    monkeypatch.setattr(reader.terms, "load", lambda: (loads.append(1), real_load())[1])
    (root / "note2.md").write_text("The quarry cart axle was greased with tallow.\n")
    (root / "note4.md").unlink()
    report = writer.sync()
    assert (report.updated, report.removed, report.unchanged) == (1, 1, 4)
    assert tokenised == ["note2.md"]  # only the file that changed
    hits = reader.search("quarry cart axle tallow", 1)
    assert hits[0].path.endswith("note2.md") and hits[0].bm25_rank == 1
    assert loads == [] and tokenised == ["note2.md"]  # read again file by file
    assert built == ([6, 5, 5] if where else [5])  # embedded: once, by the sync, then read
    assert sorted(r.rel for r in reader.lexical.rows.values()) == [
        f"note{n}.md" for n in (0, 1, 2, 3, 5)
    ]
    if where:
        assert not (settings.data_dir / "file_index").exists()  # all on the server


def test_an_index_of_before_has_its_terms_read_from_its_chunks_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("The orchard ladder is kept in the cider barn.\n")
    (root / "b.md").write_text(f"{filler(1)}\n")
    index = lexical_index(tmp_path, root)
    index.sync()
    index.terms.bind("an index of before")  # its terms store empty, of no collection
    tokenised = tokenising(monkeypatch, root)
    first = lexical_index(tmp_path, root)
    assert first.search("orchard ladder cider barn", 1)[0].bm25_rank == 1
    assert sorted(tokenised) == ["a.md", "b.md"]
    again = lexical_index(tmp_path, root)
    assert again.search("orchard ladder cider barn", 1)[0].bm25_rank == 1
    assert sorted(tokenised) == ["a.md", "b.md"]  # once


class Failing(LexicalEmbedder):
    """Fails at a chunk that says so, as a model whose server went away mid-build."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if any("Failing here" in text for text in texts):
            raise RuntimeError("the embedder went away")
        return super().embed_documents(texts)


def test_what_a_build_has_written_is_searched_before_it_ends_or_if_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Search what is indexed so far: the chunks a running build has written are found by
    their words and their vectors; after a build that failed midway, the same."""
    monkeypatch.setattr(index_module, "_EMBED_BATCH", 1)  # each chunk written as embedded
    root = tmp_path / "notes"
    root.mkdir()
    (root / "0.md").write_text(f"{filler(2)}\n")
    settings = make_settings(tmp_path, files={"roots": [str(root)], "embedder": "lexical"})
    index = FileIndex(settings, embedder=Failing())
    index.sync()
    assert index.search(filler(2)[:60], 1) and index.lexical.loaded  # the BM25 side is read
    (root / "a.md").write_text("The orchard ladder is kept in the cider barn.\n")
    (root / "b.md").write_text("The quarry cart axle was greased with tallow.\n")
    (root / "c.md").write_text("Failing here: the embedder goes away at this file.\n")
    during: list[SearchHit] = []

    def progress(done: int, total: int, name: str) -> None:
        if name.endswith("c.md"):  # a.md and b.md written, the build going on
            during.extend(index.search("orchard ladder cider barn", 1))

    with pytest.raises(RuntimeError, match="went away"):
        index.sync(progress=progress)
    assert during and during[0].path.endswith("a.md")
    assert during[0].bm25_rank == 1 and during[0].vector_rank == 1
    after = index.search("quarry cart axle tallow", 1)
    assert after[0].path.endswith("b.md") and after[0].bm25_rank == 1
    other = FileIndex(settings, embedder=LexicalEmbedder())  # another process, after
    assert other.search("quarry cart axle tallow", 1)[0].bm25_rank == 1


def test_index_then_search_at_the_terminal_on_a_mixed_folder(tmp_path: Path) -> None:
    """`local2 index` then `local2 search`: the fact deep in the PDF's page comes back with
    its page, in the passage; --json prints the contract's shape."""
    env = indexed_folder(tmp_path)
    found = local2("search", "Kestrel valve rated pressure", "--json", "-k", "3", env=env)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert set(hits[0]) == {"source", "path", "page", "score", "passage", "why"}
    top = hits[0]
    assert (top["source"], top["path"], top["page"]) == ("files", "papers/plant.pdf", 3)
    assert VALVE in top["passage"] and top["why"]["bm25_rank"] == 1
    shown = local2("search", "Kestrel valve rated pressure", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "[1] papers/plant.pdf, page 3" in shown.stdout and "words #1" in shown.stdout
    assert "412 kPa" in shown.stdout


def test_a_first_search_on_a_fresh_home_waits_for_the_build_and_exits_cleanly(
    tmp_path: Path,
) -> None:
    """No `local2 index` before: `local2 search` builds the index as search_files does,
    waiting files.index_wait_s for it, so the notes are found (it used to search the empty
    index at once, print 'Nothing found', and die at exit with the build inside Chroma)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(3):
        (notes / f"n{n}.md").write_text(f"# Note {n}\n\nThe otter swims in kelp bed {n}.\n")
    (notes / "t.txt").write_text("plain text about a sea otter\n")
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "files.yaml").write_text(f"roots: [{notes}]\n")
    (conf / "memory.yaml").write_text("embedder: lexical\n")
    env = {"LOCAL2_HOME": str(tmp_path / "home"), "LOCAL2_CONFIG": str(conf)}
    found = local2("search", "otter", "--in", "files", "--json", env=env)
    assert found.returncode == 0, (found.returncode, found.stderr[-500:])
    paths = {hit["path"] for hit in json.loads(found.stdout)["hits"]}
    assert paths == {"notes/n0.md", "notes/n1.md", "notes/n2.md", "notes/t.txt"}, paths


def test_search_in_memory_at_the_terminal(tmp_path: Path) -> None:
    """`local2 search --in memory`, in-process: a memory saved with `local2 memory save`
    comes back as a hit of its own, found by meaning, as `recall_memory` finds it."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "memory.yaml").write_text("embedder: lexical\n")
    app = typer.Typer(pretty_exceptions_enable=False)
    app.callback()(cli_main)
    memory_commands.register(app)
    search_commands.register(app)
    runner = CliRunner()
    offsite = "The team offsite is in Lisbon, in the second week of May."
    saved = runner.invoke(app, ["--config", str(conf), "memory", "save", offsite])
    assert saved.exit_code == 0, saved.output
    asked = ["--config", str(conf), "search", "where is the team offsite", "--in", "memory"]
    found = runner.invoke(app, [*asked, "--json"])
    assert found.exit_code == 0, found.output
    top = json.loads(found.stdout)["hits"][0]
    assert (top["source"], top["passage"]) == ("memory", offsite)
    assert top["why"]["vector_rank"] == 1 and top["why"]["bm25_rank"] is None
    shown = runner.invoke(app, asked)
    assert shown.exit_code == 0, shown.output
    assert "meaning #1" in shown.stdout and offsite in shown.stdout


def test_search_files_in_an_agent_turn_gives_the_model_the_passage(tmp_path: Path) -> None:
    """Against the Ollama-protocol test server: the model's search_files result holds the
    fact from deep in the PDF's page, with the file and the page."""
    env = indexed_folder(tmp_path)
    with FakeOllama(RuleBrain()) as server:
        asked = local2(
            "ask",
            "What do my documents say about the pressure the Kestrel valve is rated for?",
            "--json",
            "--backend",
            "ollama",
            env={**env, "OLLAMA_HOST": server.url},
        )
    assert asked.returncode == 0, asked.stderr
    calls = json.loads(asked.stdout)["tool_calls"]
    search = calls[0]
    assert search["tool"] == "search_files"
    assert "papers/plant.pdf, page 3" in search["result"] and VALVE in search["result"]


def test_a_persons_document_on_a_team_server_is_theirs_alone(
    tmp_path: Path, chroma_server: Any
) -> None:
    settings = make_settings(
        tmp_path,
        memory={"chroma_url": chroma_server.url, "embedder": "lexical"},
        files={"embedder": "lexical", "index_collection": f"files-{uuid.uuid4().hex[:8]}"},
    )
    library = Folders(settings).own_documents
    assert library is not None
    pages = [[filler(n)] for n in range(1, 4)]
    pages[1] = [f"{filler(50, 8)} {VALVE}"]
    library.add("ana", "plant.pdf", samples.pdf_of(pages, "Plant"))
    library.add("bo", "almanac.md", f"# Almanac\n\n{ALMANAC}\n".encode())
    searcher = open_searcher(settings)  # another process: reads the server's collections
    mine = searcher.search(Person("ana"), "Kestrel valve pressure", "documents", 3)["hits"]
    assert mine and mine[0]["path"] == "my-documents/plant.pdf" and mine[0]["page"] == 2
    assert VALVE in mine[0]["passage"]
    theirs = searcher.search(Person("bo"), "Kestrel valve pressure", "documents", 3)["hits"]
    assert all("plant" not in h["path"] and VALVE not in h["passage"] for h in theirs)
    nobody = searcher.search(Person("cy"), "Kestrel valve pressure", "documents", 3)["hits"]
    assert nobody == []
    assert not (settings.data_dir / "file_index").exists()  # all on the server
