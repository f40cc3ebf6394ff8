"""The engram store on real Chroma in tmp dirs: recall, ranking, ratings, persistence, CLI."""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings
from typer.testing import CliRunner

from local2.cli._memory import memory_app
from local2.config import load_settings
from local2.memory._embedders import LexicalEmbedder, MiniLMEmbedder
from local2.memory._facts import USER_MESSAGE, USER_REQUEST, Fact
from local2.memory._store import (
    EmbedderMismatchError,
    EngramStore,
    FactSaved,
    engram_id,
    turn_text,
)

FACTS = Path(__file__).parents[1] / "fixtures" / "planted_facts.json"


def _settings(data_dir: Path, **memory):
    return load_settings(
        overrides={
            "system": {"data_dir": str(data_dir)},
            "memory": {"embedder": "lexical", **memory},
        }
    )


def _store(tmp_path: Path, **memory) -> EngramStore:
    return EngramStore.open(_settings(tmp_path, **memory), LexicalEmbedder())


def _turn(store: EngramStore, qid: str, query: str, answer: str, session: str = "s1") -> str:
    return store.ingest_turn(
        session_id=session,
        query_id=qid,
        query=query,
        answer=answer,
        tools_used=["web_search", "web_fetch", "web_search"],
        model="qwen3:4b",
    )


def test_store_and_recall(tmp_path):
    store = _store(tmp_path)
    tid = _turn(store, "q1", "What colour is the garden shed?", "The garden shed is green.")
    sid = store.save("The spare key is under the blue flower pot.", session_id="s1", query_id="q2")
    _turn(store, "q3", "How tall is Mount Kenya?", "About 5199 metres.")
    assert store.count() == 3

    hits = store.recall("garden shed colour", k=2)
    assert hits[0]["id"] == tid
    assert hits[0]["content"] == "Q: What colour is the garden shed?\nA: The garden shed is green."
    assert hits[0]["kind"] == "episodic" and hits[0]["reward"] is None
    assert 0 <= hits[0]["age_s"] < 60
    assert store.recall("where is the spare key", k=1)[0]["id"] == sid

    engram = store.get(tid)
    assert engram is not None
    assert engram["tools"] == "web_search,web_fetch"  # used tools, each once, in order
    assert (engram["session_id"], engram["query_id"], engram["model"]) == ("s1", "q1", "qwen3:4b")
    assert store.get(sid)["kind"] == "saved"


def test_similarity_is_cosine(tmp_path):
    store = _store(tmp_path, min_similarity=-1.0)
    emb = LexicalEmbedder()
    texts = ["red apples and green pears", "green pears in a bowl", "a bowl of soup"]
    ids = [store.save(t, session_id="s", query_id=f"q{i}") for i, t in enumerate(texts)]
    query = "green pears and red apples"
    qv = emb.embed_query(query)
    hits = {h["id"]: h["similarity"] for h in store.recall(query, k=3)}
    for eid, text in zip(ids, texts, strict=True):
        expected = sum(a * b for a, b in zip(qv, emb.embed_documents([text])[0], strict=True))
        assert math.isclose(hits[eid], expected, abs_tol=1e-3)
    assert math.isclose(hits[ids[0]], 1.0, abs_tol=1e-3)  # same words: cosine 1, not an L2 value


def test_min_similarity_drops_unrelated(tmp_path):
    store = _store(tmp_path, min_similarity=0.3)
    store.save("The basil on the balcony needs water every two days.", session_id="s", query_id="q")
    assert store.recall("quarterly budget review with Helga") == []
    assert store.recall("how often to water the basil")


def test_exact_duplicates_are_stored_once(tmp_path):
    store = _store(tmp_path)
    first = _turn(store, "q1", "What is the capital of France?", "Paris.")
    again = _turn(store, "q2", "what is the capital of   FRANCE?", "paris.", session="s2")
    saved = store.save("Paris is the capital of France.", session_id="s", query_id="q3")
    saved_again = store.save("  paris is the capital of france. ", session_id="s", query_id="q4")
    assert first == again and saved == saved_again and first != saved
    assert store.count() == 2
    assert first == engram_id(turn_text("What is the capital of France?", "Paris."))


def test_bad_engrams_left_out_unless_asked(tmp_path):
    store = _store(tmp_path)
    good = _turn(store, "q1", "Best pizza place in town?", "Luigi's on Elm street.")
    bad = _turn(store, "q2", "Best pizza topping in town?", "Pineapple and glue.")
    low = _turn(store, "q3", "Best pizza dough in town?", "Use cement.")
    assert store.annotate("q2", reward=1) == 1
    assert store.annotate("q3", critic_score=2) == 1
    ids = [h["id"] for h in store.recall("best pizza in town", k=5)]
    assert ids == [good]
    everything = {h["id"]: h for h in store.recall("best pizza in town", k=5, include_bad=True)}
    assert set(everything) == {good, bad, low}
    assert everything[bad]["reward"] == 1.0 and everything[low]["critic_score"] == 2
    # A later good rating redeems an engram the critic graded low.
    store.annotate("q3", critic_score=4)
    assert low in [h["id"] for h in store.recall("best pizza in town", k=5)]


def test_reward_and_critic_score_change_the_order(tmp_path):
    store = _store(tmp_path, weight_reward=1.0, weight_recency=0.0)
    a = _turn(store, "qa", "Which train goes to the airport?", "The S1 train goes to the airport.")
    b = _turn(store, "qb", "Which bus goes to the airport?", "The 88 bus goes there.")
    before = store.recall("which train goes to the airport", k=2)
    assert [h["id"] for h in before] == [a, b]
    gap = before[0]["similarity"] - before[1]["similarity"]
    assert 0 < gap < 0.5  # close enough for a rating to matter

    store.annotate("qb", critic_score=5)  # critic term: half of (5 - 3) / 2, weight 1: +0.5
    after_critic = store.recall("which train goes to the airport", k=2)
    assert [h["id"] for h in after_critic] == [b, a]
    assert after_critic[0]["critic_score"] == 5

    store.annotate("qa", reward=5)  # +1.0: the person's rating outweighs the critic's grade
    after_reward = store.recall("which train goes to the airport", k=2)
    assert [h["id"] for h in after_reward] == [a, b]
    assert after_reward[0]["reward"] == 5.0
    assert store.get(a)["reward"] == 5.0 and store.get(b)["critic_score"] == 5


def test_annotation_before_ingest_waits_for_the_engram(tmp_path):
    store = _store(tmp_path)
    assert store.annotate("q-early", critic_score=1) == 0  # critique finished before ingest
    eid = _turn(store, "q-early", "Is the moon made of cheese?", "Yes, cheddar.")
    assert store.get(eid)["critic_score"] == 1
    assert store.recall("moon cheese") == []
    assert store.annotate("unknown-query") == 0


def test_recall_fetches_beyond_k_before_reranking(tmp_path):
    # Ten near-identical memories; the one rated 5 is not among Chroma's top 1 by similarity
    # but must win after re-ranking.
    store = _store(tmp_path, weight_reward=1.0, weight_recency=0.0)
    ids = [
        _turn(store, f"q{i}", f"Note number {i} about the harbour ferry", "x" * (i + 1))
        for i in range(10)
    ]
    store.annotate("q9", reward=5)
    assert store.recall("note about the harbour ferry", k=1)[0]["id"] == ids[9]


def test_recall_looks_further_when_the_nearest_are_bad(tmp_path):
    store = _store(tmp_path, min_similarity=0.1)
    for i in range(30):
        _turn(store, f"bad{i}", f"harbour ferry timetable {i}?", f"harbour ferry timetable {i}")
        store.annotate(f"bad{i}", reward=1)
    good = store.save("The ferry leaves the harbour pier at noon.", session_id="s", query_id="g")
    hits = store.recall("harbour ferry timetable", k=1)
    assert [h["id"] for h in hits] == [good]  # beyond the first 20 candidates, all bad
    assert len(store.recall("harbour ferry timetable", k=5, include_bad=True)) == 5


def test_list_get_delete_export(tmp_path):
    store = _store(tmp_path)
    ids = [store.save(f"fact number {i}", session_id="s", query_id=f"q{i}") for i in range(5)]
    store.annotate("q0", reward=4)  # annotate is for turns only; saved facts are untouched
    listed = store.list(limit=3)
    assert [r["id"] for r in listed] == ids[::-1][:3]  # newest first
    assert [r["id"] for r in store.list(limit=3, offset=3)] == ids[1::-1]
    assert store.delete(ids[0]) and not store.delete(ids[0])
    assert store.get(ids[0]) is None and store.count() == 4
    out = tmp_path / "out" / "memories.jsonl"
    assert store.export(out) == 4
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["id"] for r in rows} == set(ids[1:])
    assert all(r["kind"] == "saved" and r["content"].startswith("fact number") for r in rows)


def test_persists_across_processes(tmp_path):
    writer = textwrap.dedent(
        f"""
        from local2.config import load_settings
        from local2.memory._embedders import LexicalEmbedder
        from local2.memory._store import EngramStore
        s = load_settings(overrides={{"system": {{"data_dir": {str(tmp_path)!r}}},
                                     "memory": {{"embedder": "lexical"}}}})
        store = EngramStore.open(s, LexicalEmbedder())
        print(store.ingest_turn(session_id="s", query_id="q1", query="Where is the ferry?",
                                answer="Pier 4.", tools_used=[], model="m"))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", writer], capture_output=True, text=True, timeout=120, check=True
    )
    eid = out.stdout.strip().splitlines()[-1]
    store = EngramStore.open(_settings(tmp_path))  # recorded embedder chosen again: lexical
    assert isinstance(store.embedder, LexicalEmbedder)
    hits = store.recall("where does the ferry leave")
    assert hits and hits[0]["id"] == eid
    store.annotate("q1", reward=2)
    reader = writer.split("print(")[0] + f"print(store.get({eid!r})['reward'], store.count())"
    out = subprocess.run(
        [sys.executable, "-c", reader], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["2.0", "1"]


def test_each_embedder_has_its_own_collection_kept_in_step(tmp_path):
    store = EngramStore.open(_settings(tmp_path), LexicalEmbedder(512))
    eid = store.save("The office door code is 7391.", session_id="s", query_id="q")
    _turn(store, "q2", "Door code?", "7391")
    store.annotate("q2", reward=4)
    assert store.collection.name == "engrams.lexical-hash-512"

    # Another embedder never reads these vectors: it gets its own collection, filled by
    # re-embedding the text, with the metadata (the rating) carried over.
    other = EngramStore.open(_settings(tmp_path), LexicalEmbedder(256), sync="no")
    assert other.collection.name == "engrams.lexical-hash-256" and other.count() == 0
    assert other.sync() == 2 and other.count() == 2
    assert other.recall("office door code", k=1)[0]["id"] == eid
    assert next(r for r in other.list() if r["query_id"] == "q2")["reward"] == 4.0

    # Ratings and deletions reach every collection, so re-embedding never revives them.
    other.annotate("q2", reward=1)
    assert store.get(next(r["id"] for r in store.list() if r["query_id"] == "q2"))["reward"] == 1
    assert other.delete(eid) and store.get(eid) is None
    assert EngramStore.open(_settings(tmp_path), LexicalEmbedder(512), sync="now").count() == 1


def test_reembed_fills_the_configured_collection_and_rebuild_starts_over(tmp_path):
    first = EngramStore.open(_settings(tmp_path), LexicalEmbedder(256))
    eid = first.save("The spare key is under the blue pot.", session_id="s", query_id="q")
    store, n = EngramStore.reembed(_settings(tmp_path))  # memory.embedder: lexical (512)
    assert (store.embedder.name, n, store.count()) == ("lexical-hash-512", 1, 1)
    assert EngramStore.reembed(_settings(tmp_path))[1] == 0  # nothing missing any more
    rebuilt, n = EngramStore.reembed(_settings(tmp_path), rebuild=True)
    assert n == 1 and rebuilt.recall("spare key", k=1)[0]["id"] == eid
    assert list(tmp_path.glob("memory_backup_*.jsonl"))


def test_a_collection_of_earlier_versions_is_renamed_for_its_embedder(tmp_path):
    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    legacy = client.create_collection(
        "engrams",
        configuration={"hnsw": {"space": "cosine"}},
        metadata={"embedder": "lexical-hash-512", "embedder_scheme": "none"},
        embedding_function=None,
    )
    text = "Q: Where is the ferry?\nA: Pier 4."
    legacy.add(
        ids=[engram_id(text)],
        embeddings=LexicalEmbedder().embed_documents([text]),
        documents=[text],
        metadatas=[{"kind": "episodic", "query_id": "q1", "created_at": 1.0}],
    )
    store = EngramStore.open(_settings(tmp_path))  # lexical, as recorded
    assert store.collection.name == "engrams.lexical-hash-512" and store.count() == 1
    assert [c.name for c in client.list_collections()] == ["engrams.lexical-hash-512"]


def test_a_collection_recording_another_prefix_scheme_is_refused(tmp_path):
    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    client.create_collection(
        "engrams.lexical-hash-512",
        metadata={"embedder": "lexical-hash-512", "embedder_scheme": "nomic"},
        embedding_function=None,
    )
    with pytest.raises(EmbedderMismatchError, match="reembed --rebuild"):
        EngramStore.open(_settings(tmp_path), LexicalEmbedder())


def test_a_newer_fact_supersedes_the_older_one(tmp_path):
    store = _store(tmp_path)
    ines = store.save_fact(
        Fact("The user's sister's name is Ines.", "sister name", USER_REQUEST),
        session_id="s1",
        query_id="q1",
    )
    assert ines.created and ines.superseded == []
    # The same turn saying it again in other words adds nothing.
    again = store.save_fact(
        Fact("The user's sister is called Ines.", "sister name", USER_MESSAGE, "model"),
        session_id="s1",
        query_id="q1",
    )
    assert again == FactSaved(ines.id, False, [])
    ana = store.save_fact(
        Fact("The user's sister's name is Ana.", "sister name", USER_MESSAGE),
        session_id="s2",
        query_id="q2",
    )
    assert ana.superseded == [ines.id]
    old = store.get(ines.id)
    assert old["superseded_by"] == ana.id and old["superseded_at"] > 0  # kept, marked
    hits = store.recall("what is my sister's name", k=5, include_bad=True)
    assert [h["id"] for h in hits] == [ana.id] and hits[0]["kind"] == "fact"
    fact = store.get(ana.id)
    assert (fact["kind"], fact["key"], fact["source"], fact["query_id"]) == (
        "fact",
        "sister name",
        USER_MESSAGE,
        "q2",
    )
    # Saying the first thing again brings it back and retires the other.
    back = store.save_fact(
        Fact("The user's sister's name is Ines.", "sister name", USER_REQUEST),
        session_id="s3",
        query_id="q3",
    )
    assert back == FactSaved(ines.id, False, [ana.id])
    assert [h["id"] for h in store.recall("sister's name", k=5)] == [ines.id]
    assert [r["id"] for r in store.list(kind="fact")] == [ana.id, ines.id]


def test_recall_by_kind_floor_and_exclusions(tmp_path):
    store = _store(tmp_path)
    turn = _turn(store, "q1", "Which platform for Edinburgh trains?", "Platform 9.")
    fact = store.save_fact(
        Fact("The user takes the Edinburgh train from platform 9.", "train platform",
             USER_MESSAGE),
        session_id="s1",
        query_id="q1",
    ).id  # fmt: skip
    query = "Edinburgh train platform"
    assert {h["id"] for h in store.recall(query, k=5)} == {turn, fact}
    assert [h["id"] for h in store.recall(query, k=5, kinds=["fact"])] == [fact]
    assert [h["id"] for h in store.recall(query, k=5, exclude_ids={fact})] == [turn]
    assert store.recall(query, k=5, min_similarity=0.99) == []


def test_cli_list_search_delete_export(tmp_path):
    settings = _settings(tmp_path)
    store = EngramStore.open(settings, LexicalEmbedder())
    keep = _turn(store, "q1", "Which platform for Edinburgh?", "Platform 9.")
    gone = store.save("The recycling goes out on Tuesday.", session_id="s", query_id="q2")
    store.annotate("q1", reward=5, critic_score=4)
    runner = CliRunner()
    obj = {"settings": settings}

    listed = runner.invoke(memory_app, ["list", "--json"], obj=obj)
    assert listed.exit_code == 0, listed.output
    rows = [json.loads(line) for line in listed.output.splitlines()]
    assert [r["id"] for r in rows] == [gone, keep] and rows[1]["reward"] == 5.0

    table = runner.invoke(memory_app, ["list"], obj=obj, terminal_width=200)
    assert keep in table.output and "critic" in table.output and "4" in table.output

    found = runner.invoke(memory_app, ["search", "platform edinburgh", "--k", "1"], obj=obj)
    assert found.exit_code == 0 and keep in found.output and gone not in found.output

    assert runner.invoke(memory_app, ["delete", gone], obj=obj).exit_code == 0
    assert runner.invoke(memory_app, ["delete", gone], obj=obj).exit_code == 1
    out = tmp_path / "export.jsonl"
    assert runner.invoke(memory_app, ["export", str(out)], obj=obj).exit_code == 0
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == [keep]


def test_cli_loads_settings_without_ctx_obj(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCAL2_HOME", str(tmp_path))
    monkeypatch.delenv("LOCAL2_CONFIG", raising=False)
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "memory.yaml").write_text("embedder: lexical\n")
    monkeypatch.setenv("LOCAL2_CONFIG", str(cfg))
    EngramStore.open(load_settings(), LexicalEmbedder()).save(
        "Leila is vegetarian.", session_id="s", query_id="q"
    )
    result = CliRunner().invoke(memory_app, ["list", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["content"] == "Leila is vegetarian."


def _recall_at_3(store: EngramStore, facts: list[dict]) -> float:
    return _recall_at_k(store, facts, 3)


def _recall_at_k(store: EngramStore, facts: list[dict], k: int) -> float:
    found = 0
    for fact in facts:
        ids = [h["id"] for h in store.recall(fact["question"], k=k)]
        found += engram_id(fact["fact"]) in ids
    return found / len(facts)


def _plant(store: EngramStore) -> list[dict]:
    data = json.loads(FACTS.read_text())
    for fact in data["facts"]:
        store.save(fact["fact"], session_id="plant", query_id=fact["id"])
    for i, text in enumerate(data["distractors"]):
        _turn(store, f"d{i}", "Tell me something", text)
    return data["facts"]


@pytest.mark.slow
def test_planted_fact_recall_at_3_minilm(tmp_path, capsys):
    store = EngramStore.open(_settings(tmp_path / "minilm", embedder="minilm"), MiniLMEmbedder())
    facts = _plant(store)
    assert len(facts) >= 30
    minilm = _recall_at_3(store, facts)
    lexical = _recall_at_3(_plant_lexical(tmp_path / "lexical"), facts)
    at_1 = _recall_at_k(store, facts, 1)
    with capsys.disabled():
        print(
            f"\nplanted-fact recall ({len(facts)} facts): minilm @3 {minilm:.3f} @1 {at_1:.3f}, "
            f"lexical @3 {lexical:.3f}"
        )
    assert minilm >= 0.85
    assert minilm > lexical  # paraphrases need a semantic model, not shared words


def _plant_lexical(path: Path) -> EngramStore:
    store = _store(path)
    _plant(store)
    return store


def test_closing_a_store_lets_go_of_its_chroma_files(tmp_path):
    """An embedded Chroma client keeps its SQLite and index files open until closed; a
    notebook or a test run that opens agents one after another ran out of descriptors."""

    def chroma_files() -> list[str]:
        held = []
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/self/fd/{fd}")
                if target.startswith(str(tmp_path)):
                    held.append(target)
        return held

    for _ in range(3):
        store = _store(tmp_path)
        _turn(store, "q1", "Where is the mill?", "On the river.")
        assert store.recall("mill", k=1)
        assert chroma_files()  # open while in use
        store.close()
        gc.collect()  # chromadb's stopped system lets go of its SQLite handles when collected
        assert chroma_files() == []
