"""Memory and the file index on a Chroma server (`chroma run`), as a team shares them."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

import chromadb
import pytest

from local2.errors import ChromaUnavailable
from local2.files._index import FileIndex
from local2.memory._embedders import LexicalEmbedder
from local2.memory._owners import chroma_client
from local2.memory._shelf import open_memory
from local2.memory._store import EngramStore, collection_name
from local2.ports import free_port
from local2.service.doctor import run_checks
from tests.kit.helpers import make_settings


def server_settings(tmp_path: Path, url: str, **sections: Any) -> Any:
    memory = {"chroma_url": url, "collection": f"engrams-{uuid.uuid4().hex[:8]}"}
    return make_settings(tmp_path, memory=memory, **sections)


def test_two_processes_share_memory_through_the_server(tmp_path: Path, chroma_server: Any) -> None:
    settings = server_settings(tmp_path, chroma_server.url)
    writer = EngramStore.open(settings, embedder=LexicalEmbedder())
    reader = EngramStore.open(settings, embedder=LexicalEmbedder())  # another client
    engram = writer.ingest_turn(
        session_id="s1",
        query_id="q1",
        query="Where is the team offsite this year?",
        answer="The team offsite is in Lisbon, in the second week of May.",
        tools_used=[],
        model="m",
    )
    hits = reader.recall("Which city hosts the offsite?", k=3)
    assert hits and hits[0]["id"] == engram and "Lisbon" in hits[0]["content"]
    reader.annotate("q1", reward=5.0)
    assert writer.get(engram)["reward"] == 5.0  # one store: the rating is seen by both
    # Nothing was written to the embedded directory; the collection is on the server.
    assert not (settings.data_dir / "chroma").exists()
    remote = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port)
    names = [c.name for c in remote.list_collections()]
    assert collection_name(settings.memory.collection, "lexical-hash-512") in names


def test_each_embedder_has_its_collection_on_the_server(tmp_path: Path, chroma_server: Any) -> None:
    """A process whose embedder differs (say its Ollama is down) gets its own collection on
    the shared server, filled from the others; the first process's collection is untouched."""
    settings = server_settings(tmp_path, chroma_server.url)
    first = EngramStore.open(settings, embedder=LexicalEmbedder(), sync="no")
    engram = first.save(
        "The staging database is rebuilt every Sunday night.", session_id="s1", query_id="q1"
    )
    other = EngramStore.open(settings, embedder=LexicalEmbedder(dim=256), sync="now")
    assert other.collection.name != first.collection.name
    assert other.get(engram)["content"].startswith("The staging database")
    assert other.recall("When is the staging database rebuilt?", k=1)[0]["id"] == engram
    remote = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port)
    base = settings.memory.collection
    mine = sorted(c.name for c in remote.list_collections() if c.name.startswith(base))
    assert mine == [
        collection_name(base, "lexical-hash-256"),
        collection_name(base, "lexical-hash-512"),
    ]
    assert first.collection.count() == other.collection.count() == 1


def test_file_index_on_the_server(tmp_path: Path, chroma_server: Any) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "wifi.txt").write_text("The cabin wifi password is larch-meadow-42.\n")
    (root / "garden.md").write_text("The garden budget for 2025 is 1200 euros.\n")
    settings = server_settings(
        tmp_path,
        chroma_server.url,
        files={"roots": [str(root)], "index_collection": f"files-{uuid.uuid4().hex[:8]}"},
    )
    report = FileIndex(settings, embedder=LexicalEmbedder()).sync()
    assert report.added == 2
    again = FileIndex(settings, embedder=LexicalEmbedder())  # a second process
    assert again.sync().unchanged == 2  # it sees the same index
    assert again.search("cabin wifi password", 1)[0].path.endswith("wifi.txt")
    assert not (settings.data_dir / "file_index").exists()


def test_unreachable_server_names_the_fix_and_the_app_still_answers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    settings = make_settings(tmp_path, memory={"chroma_url": url, "embedder": "lexical"})
    with pytest.raises(ChromaUnavailable, match="chroma run --path"):
        chroma_client(settings, "chroma")
    with caplog.at_level(logging.WARNING):
        assert open_memory(settings) is None  # memory off for this run, with a warning
    assert url in caplog.text
    checks = {c.name: c for c in run_checks(settings)}
    assert checks["chroma server"].status == "fail"
    assert "chroma run" in checks["chroma server"].fix


def test_doctor_finds_the_server(tmp_path: Path, chroma_server: Any) -> None:
    checks = {c.name: c for c in run_checks(server_settings(tmp_path, chroma_server.url))}
    assert checks["chroma server"].status == "ok"
