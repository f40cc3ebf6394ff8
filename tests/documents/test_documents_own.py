"""A person's own documents (files/_own_documents.py): kept privately, per person, whole or not at
all; limits named; a session's attached documents searched for its questions and given to
the model as data, their passages counted as read by the critic."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from local2.cli._search import why
from local2.contracts import LOCAL
from local2.critic import grounding_flags
from local2.errors import DocumentTooLarge, DocumentUnreadable, UnknownDocument
from local2.files import FileIndex, Folders, OwnDocuments
from local2.files._own_documents import safe_name
from local2.graph._turn import attached_evidence, documents_block
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from local2.service.desks._search import Searcher
from local2_testkit import documents as samples
from local2_testkit.hostile_documents import encrypted_pdf
from tests.kit.helpers import make_settings

FACT = "The Eling tidal mill was restored by the parish council in 1980."


def report(fact: str = FACT, page: int = 3) -> bytes:
    pages = [[" ".join(samples.sentences(n, 4))] for n in range(1, 6)]
    pages[page - 1].append(fact)
    return samples.pdf_of(pages, "Parish report")


def library(tmp_path: Path, **documents: Any) -> OwnDocuments:
    settings = make_settings(
        tmp_path,
        memory={"embedder": "lexical"},
        files={"embedder": "lexical"},
        documents=documents,
    )
    found = Folders(settings).own_documents
    assert found is not None
    return found


def stored(lib: OwnDocuments, owner: str) -> list[str]:
    folder = lib.folder(owner)
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_documents_are_kept_privately_in_a_folder_per_person(tmp_path: Path) -> None:
    lib = library(tmp_path)
    record = lib.add("alice", "report.pdf", report(), "s1")
    folder = lib.folder("alice")
    assert folder.parent == Path(lib.settings.data_dir) / "documents"
    assert folder.name.startswith("alice-") and len(folder.name) > 64  # name + full SHA-256
    for path in (folder, folder / "files", folder / "records"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    for path in (folder / "files" / "report.pdf", folder / "records" / f"{record['id']}.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert lib.records("bob") == [] and lib.root("bob") is None
    with pytest.raises(UnknownDocument):
        lib.get("bob", record["id"])
    assert lib.index("alice").name != lib.index("bob").name  # a collection each


def test_a_failed_add_leaves_nothing_half_stored(tmp_path: Path, monkeypatch) -> None:
    lib = library(tmp_path)
    lib.add("alice", "kept.pdf", report())
    before = stored(lib, "alice")

    def broken(*args: Any, **kwargs: Any) -> int:
        raise OSError("the disk went away while indexing")

    monkeypatch.setattr(FileIndex, "add_document", broken)
    with pytest.raises(OSError, match="disk went away"):
        lib.add("alice", "new.pdf", report())
    assert stored(lib, "alice") == before  # no new.pdf, no record
    monkeypatch.undo()
    with pytest.raises(DocumentUnreadable, match="encrypted"):
        lib.add("alice", "locked.pdf", encrypted_pdf())
    assert stored(lib, "alice") == before
    index = lib.index("alice")
    assert {m["rel"] for m in index.collection.get(include=["metadatas"])["metadatas"]} == {
        "kept.pdf"
    }


def test_limits_are_named_and_nothing_is_kept_over_them(tmp_path: Path) -> None:
    data = report()
    lib = library(tmp_path, max_bytes=len(data) - 1)
    with pytest.raises(DocumentTooLarge, match=r"documents\.max_bytes"):
        lib.add("alice", "big.pdf", data)
    lib = library(tmp_path / "two", own_max_documents=1)
    lib.add("alice", "one.pdf", data)
    with pytest.raises(DocumentTooLarge, match=r"documents\.own_max_documents") as err:
        lib.add("alice", "two.pdf", data)
    assert "remove" in err.value.fix.lower()
    lib.add("bob", "his.pdf", data)  # a limit per person
    lib = library(tmp_path / "room", own_max_mb=1)
    with pytest.raises(DocumentTooLarge, match=r"documents\.own_max_mb"):
        for n in range(1 + 1024 * 1024 // len(data)):
            lib.add("alice", f"{n}.pdf", data)
    assert len(lib.records("alice")) == 1024 * 1024 // len(data)


@pytest.mark.parametrize(
    ("given", "fmt", "kept"),
    [
        ("../../etc/passwd.pdf", "pdf", "passwd.pdf"),
        (".secret.pdf", "pdf", "secret.pdf"),
        ("report", "pdf", "report.pdf"),
        ("notes.txt", "pdf", "notes.pdf"),  # a PDF whatever it was called
        ("C:\\Users\\me\\deck.pptx", "pptx", "deck.pptx"),
        ('a<b>:"c|d?.docx', "docx", "a_b_c_d_.docx"),
        ("", "epub", "document.epub"),
        ("plain.md", "text", "plain.md"),
    ],
)
def test_uploaded_names_are_made_safe(given: str, fmt: str, kept: str) -> None:
    assert safe_name(given, fmt) == kept


def test_two_uploads_of_one_name_are_kept_apart(tmp_path: Path) -> None:
    lib = library(tmp_path)
    first = lib.add("alice", "report.pdf", report())
    second = lib.add("alice", "report.pdf", report("The mill wheel is oak."))
    assert (first["path"], second["path"]) == (
        "my-documents/report.pdf",
        "my-documents/report (2).pdf",
    )


def test_attached_passages_are_the_sessions_own_and_best_first(tmp_path: Path) -> None:
    lib = library(tmp_path, attached_k=2)
    mine = lib.add("alice", "report.pdf", report(), "s1")
    lib.add("alice", "other.pdf", report("The Eling tidal mill sells flour on Saturdays."))
    lib.add("bob", "his.pdf", report("The Eling tidal mill was restored in 1999, says Bob."), "s1")
    hits = lib.passages("alice", "s1", "When was the Eling tidal mill restored?")
    assert hits and {h["document_id"] for h in hits} == {mine["id"]}
    assert (hits[0]["file"], hits[0]["page"], hits[0]["unit"]) == (
        "my-documents/report.pdf",
        3,
        "page",
    )
    assert FACT in hits[0]["text"] and len(hits) <= 2
    assert hits == sorted(hits, key=lambda h: -h["score"])
    assert lib.passages("alice", "s2", "Eling tidal mill") == []  # nothing attached there
    lib.attach("alice", mine["id"], "s2")
    assert lib.passages("alice", "s2", "Eling tidal mill restored")[0]["document_id"] == mine["id"]


def test_attached_passages_are_what_local2_search_finds_even_a_chunk_too_long_to_fit(
    tmp_path: Path,
) -> None:
    """A paragraph on one long line is one chunk, longer than the room for passages: it is
    given by its best passage, not dropped for worse hits that fit (the hits, their pages
    and their order are ``local2 search --in documents``'s)."""
    built = "The Eling tidal mill was built in 1418 by the monks of Beaulieu Abbey."
    long_line = f"{' '.join(samples.sentences(1, 40))} {built} {' '.join(samples.sentences(2, 20))}"
    notes = [
        " ".join(samples.sentences(10 + n, 6)) + " The mill was built of stone." for n in range(5)
    ]
    settings = make_settings(
        tmp_path, memory={"embedder": "lexical"}, files={"embedder": "lexical"}
    )
    folders = Folders(settings)
    lib = folders.own_documents
    assert lib is not None
    lib.add("local", "mill.md", "\n\n".join([long_line, *notes]).encode(), "s1")
    question = "When was the Eling tidal mill built?"
    assert len(long_line) > settings.documents.attached_chars  # it cannot fit whole

    hits = lib.passages("local", "s1", question)
    found = Searcher(folders).search(LOCAL, question, "documents", settings.documents.attached_k)
    assert [(h["file"], h["page"]) for h in hits] == [(f["path"], f["page"]) for f in found["hits"]]
    assert any(built in h["text"] for h in hits)  # the model is given the answer
    assert [h.get("passage") for h in hits] == [f["passage"] for f in found["hits"]]
    assert [h.get("found_by") for h in hits] == [why(f) for f in found["hits"]]  # its words
    assert sum(len(h["text"]) for h in hits) <= settings.documents.attached_chars


def test_passage_scores_are_plain_numbers_also_for_hits_found_by_words_alone(
    tmp_path: Path, fake_ollama: Any
) -> None:
    """A hit found by its words alone gets its similarity from Chroma's stored vector (a
    numpy array): still a plain float, or the turn's checkpoint cannot be written. (The
    test kit's Ollama embeddings leave some chunks out of the nearest ones.)"""
    settings = make_settings(
        tmp_path, system={"ollama_host": fake_ollama.url}, memory={"embedder": "ollama"}
    )
    lib = Folders(settings).own_documents
    assert lib is not None
    lib.add("local", "report.pdf", report(), "s1")
    question = "When was the Eling tidal mill restored?"
    words_only = [h for h in lib.index("local").search(question, 4) if h.vector_rank is None]
    assert words_only  # the case this is about
    hits = lib.passages("local", "s1", question)
    assert {type(h["score"]) for h in hits} == {float}, [type(h["score"]) for h in hits]


def test_a_turn_gets_its_sessions_passages_as_data_and_the_critic_counts_them_read(
    tmp_path: Path,
) -> None:
    settings = make_settings(
        tmp_path, memory={"embedder": "lexical"}, files={"embedder": "lexical"}
    )
    model = ScriptedChatModel(
        replies=[reply("It was restored in 1980 (my-documents/report.pdf, page 3).")],
        repeat_last=True,
    )
    agent = Agent(settings, chat_model=model, tools=[], memory=None, critic=None)
    try:
        agent.documents.own_documents.add("local", "report.pdf", report(), "s1")
        payload = agent.turns.ask("When was the Eling tidal mill restored?", "s1")
        seen = [m for m in model.seen[0] if isinstance(m, HumanMessage)][-1]
    finally:
        agent.close()
    [hit, *_] = payload["document_hits"]
    assert (hit["file"], hit["page"]) == ("my-documents/report.pdf", 3)
    assert str(seen.content).startswith(documents_block(payload["document_hits"]))
    assert str(seen.content).endswith("When was the Eling tidal mill restored?")
    state = {"document_hits": payload["document_hits"]}
    evidence = attached_evidence(state)  # type: ignore[arg-type]
    assert grounding_flags(payload["answer"], evidence) == []
    pages = sorted({h["page"] for h in payload["document_hits"]})
    unread = min(set(range(1, 6)) - set(pages))
    assert grounding_flags(f"See my-documents/report.pdf, page {unread}.", evidence) == [
        f"unread page: my-documents/report.pdf, page {unread} (page {unread} was not among "
        f"the pages read: {', '.join(str(p) for p in pages)})"
    ]
