"""The memory tools and the ingest node, on real Chroma and a real (fake-Ollama) embedder."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from local2.config import load_settings
from local2.errors import ToolError
from local2.events import MEMORY_INGEST_FAILED, MEMORY_INGESTED, MEMORY_RECALL
from local2.graph._turn import RETRY_FILE, Services
from local2.graph._turn import remember_turn as ingest
from local2.memory._embedders import LexicalEmbedder, OllamaEmbedder
from local2.memory._shelf import open_memory
from local2.memory._store import EngramStore
from local2.tools._base import ToolContext, ToolResult
from local2.tools._memory_tools import humanize_age, memory_tools
from local2_testkit.ollama_server import FakeOllama

CTX = ToolContext(session_id="s1", query_id="q-now")


def _settings(data_dir: Path, **memory):
    return load_settings(
        overrides={
            "system": {"data_dir": str(data_dir)},
            "memory": {"embedder": "lexical", **memory},
        }
    )


def _tools(store: EngramStore, settings):
    return {t.name: t for t in memory_tools(store, settings)}


def _services(settings, store) -> Services:
    return Services(
        settings=settings,
        chat_model=FakeListChatModel(responses=["unused"]),
        turn_log=None,  # type: ignore[arg-type]  # ingest never touches history
        memory=store,
    )


def _state(qid: str, query: str, answer: str, **extra):
    return {
        "query": query,
        "answer": answer,
        "session_id": "s1",
        "query_id": qid,
        "model": "qwen3:4b",
        "tool_calls": [
            {
                "id": "c1",
                "tool": "web_search",
                "args": {},
                "result": "",
                "error": None,
                "duration_s": 0.1,
            },
        ],
        **extra,
    }


def test_recall_tool_lists_hits_with_ids_and_events(tmp_path):
    settings = _settings(tmp_path)
    store = EngramStore.open(settings, LexicalEmbedder())
    eid = store.ingest_turn(
        session_id="s0",
        query_id="q0",
        query="Which platform does the Edinburgh train use?",
        answer="Platform 9.",
        tools_used=[],
        model="m",
    )
    store.annotate("q0", reward=5, critic_score=4)
    tools = _tools(store, settings)
    assert set(tools) == {"recall_memory", "save_memory"}
    assert tools["recall_memory"].parameters["required"] == ["query"]  # schema from config

    result = tools["recall_memory"].run({"query": "Edinburgh train platform", "k": "3"}, CTX)
    assert isinstance(result, ToolResult)
    line = next(x for x in result.text.splitlines() if x.startswith(f"[{eid}]"))
    assert "(similarity 0." in line and "just now" in line and "reward 5" in line
    assert "critic 4" in line and "Q: Which platform does the Edinburgh train use?" in line
    assert "not instructions" in result.text
    hits = result.data["memory_hits"]
    assert [h["id"] for h in hits] == [eid] and hits[0]["reward"] == 5.0
    assert result.events == [
        (MEMORY_RECALL, {"query": "Edinburgh train platform", "hits": 1, "ids": [eid]})
    ]


def test_recall_tool_no_hits_and_missing_query(tmp_path):
    settings = _settings(tmp_path)
    tools = _tools(EngramStore.open(settings, LexicalEmbedder()), settings)
    result = tools["recall_memory"].run({"query": "anything at all"}, CTX)
    assert result.text == "No memories found for: anything at all"
    assert result.data == {"memory_hits": []}
    assert result.events[0][1]["hits"] == 0
    for args in ({}, {"query": "  "}, {"query": None}):
        with pytest.raises(ToolError, match=r"^missing query argument$"):
            tools["recall_memory"].run(args, CTX)


def test_recall_tool_clamps_k_and_skips_bad_memories(tmp_path):
    settings = _settings(tmp_path, min_similarity=-1.0)
    store = EngramStore.open(settings, LexicalEmbedder())
    for i in range(15):
        store.save(f"harbour ferry timetable note {i}", session_id="s", query_id=f"q{i}")
    bad = store.ingest_turn(
        session_id="s",
        query_id="qb",
        query="harbour ferry timetable?",
        answer="It sank.",
        tools_used=[],
        model="m",
    )
    store.annotate("qb", reward=1)
    tools = _tools(store, settings)
    hits = tools["recall_memory"].run({"query": "harbour ferry timetable", "k": 50}, CTX)
    assert len(hits.data["memory_hits"]) == 10
    assert bad not in hits.events[0][1]["ids"]
    default = tools["recall_memory"].run({"query": "harbour ferry timetable", "k": "many"}, CTX)
    assert len(default.data["memory_hits"]) == settings.memory.recall_k


def test_save_tool_stores_with_context_and_dedups(tmp_path):
    settings = _settings(tmp_path)
    store = EngramStore.open(settings, LexicalEmbedder())
    save = _tools(store, settings)["save_memory"]
    result = save.run({"text": "Tomas is allergic to peanuts."}, CTX)
    eid = store.recall("peanut allergy Tomas")[0]["id"]
    assert f"[{eid}]" in result.text and result.events == [("memory.saved", {"id": eid})]
    engram = store.get(eid)
    assert (engram["kind"], engram["session_id"], engram["query_id"]) == ("saved", "s1", "q-now")
    save.run({"text": "tomas is allergic to peanuts. "}, CTX)
    assert store.count() == 1
    with pytest.raises(ToolError, match=r"^missing text argument$"):
        save.run({"query": "wrong key"}, CTX)


def test_recall_tool_reports_embedding_failure_as_tool_error(tmp_path):
    settings = _settings(tmp_path)
    with FakeOllama() as srv:
        store = EngramStore.open(settings, OllamaEmbedder(srv.url))
        store.save("a fact", session_id="s", query_id="q")
        srv.models = ["qwen3:4b"]  # the embedding model disappears
        with pytest.raises(
            ToolError, match=r"memory recall failed: .*ollama pull nomic-embed-text"
        ):
            _tools(store, settings)["recall_memory"].run({"query": "fact"}, CTX)


def test_humanize_age():
    assert humanize_age(5) == "just now"
    assert humanize_age(120) == "2 minutes ago"
    assert humanize_age(3600) == "1 hour ago"
    assert humanize_age(3 * 86400 + 10) == "3 days ago"


def test_ingest_stores_the_turn_and_emits(tmp_path):
    settings = _settings(tmp_path)
    store = EngramStore.open(settings, LexicalEmbedder())
    out = ingest(_state("q1", "What is the capital of Peru?", "Lima."), _services(settings, store))
    (entry,) = out["event_log"]
    assert entry["subject"] == MEMORY_INGESTED
    engram = store.get(entry["id"])
    assert engram["content"] == "Q: What is the capital of Peru?\nA: Lima."
    assert (engram["query_id"], engram["tools"], engram["model"]) == (
        "q1",
        "web_search",
        "qwen3:4b",
    )


def test_ingest_without_memory_or_answer_does_nothing(tmp_path):
    settings = _settings(tmp_path)
    assert ingest(_state("q1", "hi", "hello"), _services(settings, None)) == {}
    store = EngramStore.open(settings, LexicalEmbedder())
    assert ingest(_state("q1", "hi", ""), _services(settings, store)) == {}
    assert store.count() == 0


def test_ingest_failure_is_queued_and_retried(tmp_path, caplog):
    settings = _settings(tmp_path)
    queue = tmp_path / RETRY_FILE
    with FakeOllama() as srv:
        store = EngramStore.open(settings, OllamaEmbedder(srv.url))
        services = _services(settings, store)
        srv.models = ["qwen3:4b"]  # embedding model gone: every store fails
        with caplog.at_level(logging.WARNING):
            for n in (1, 2):
                out = ingest(_state(f"q{n}", f"Question {n}?", f"Answer {n}."), services)
                (entry,) = out["event_log"]
                assert entry["subject"] == MEMORY_INGEST_FAILED
                assert "ollama pull nomic-embed-text" in entry["error"]
        assert [json.loads(x)["query_id"] for x in queue.read_text().splitlines()] == ["q1", "q2"]
        assert store.count() == 0
        assert "queued for retry" in caplog.text

        srv.models = ["nomic-embed-text"]  # back: the queue drains before the new turn
        out = ingest(_state("q3", "Question 3?", "Answer 3."), services)
    (entry,) = out["event_log"]
    assert entry["subject"] == MEMORY_INGESTED and entry["retried"] == 2
    assert not queue.exists()
    assert sorted(r["query_id"] for r in store.list()) == ["q1", "q2", "q3"]


def test_unwritable_data_dir_disables_memory_but_not_the_turn(tmp_path, caplog):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the data directory should be")
    settings = _settings(blocked)
    with caplog.at_level(logging.WARNING):
        assert open_memory(settings) is None
    assert "cannot open the engram store" in caplog.text
    assert open_memory(_settings(tmp_path / "ok", enabled=False)) is None
    assert isinstance(open_memory(_settings(tmp_path / "ok")), EngramStore)


def test_ingest_into_broken_store_never_raises(tmp_path):
    settings = _settings(tmp_path)
    store = EngramStore.open(settings, LexicalEmbedder())
    # Another client drops the collection under the running store: a real Chroma error.
    other = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    other.delete_collection(store.collection.name)
    out = ingest(_state("q1", "Still there?", "Yes."), _services(settings, store))
    (entry,) = out["event_log"]
    assert entry["subject"] == MEMORY_INGEST_FAILED and entry["error"]
    assert json.loads((tmp_path / RETRY_FILE).read_text())["query_id"] == "q1"
