"""`local2 feedback` without Chroma: the rating waits in a queue file until memory opens.

Real CLI processes, real Chroma, real SQLite checkpointer. Two turns about the same ferry:
rating one bad must leave it out of recall once memory has the rating, whichever process
opens memory next.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from local2.config import Settings, load_settings
from local2.memory import deferred
from local2.memory._store import EngramStore
from local2.models._scripted import ScriptedChatModel, reply
from local2.service.agent import Agent
from tests.chat.helpers import lexical_config
from tests.kit.helpers import local2

QUERY = "When does the harbour ferry leave?"


def two_turns(settings: Settings) -> tuple[Agent, dict[str, Any], dict[str, Any]]:
    model = ScriptedChatModel(replies=[reply("Noted.")], repeat_last=True)
    agent = Agent(settings, chat_model=model, tools=[], critic=None)
    weekdays = agent.turns.ask("The harbour ferry leaves at 7 on weekdays.", "a")
    weekends = agent.turns.ask("The harbour ferry leaves at 9 on weekends.", "b")
    return agent, weekdays, weekends


def rate(config: Path, turn: dict[str, Any], rating: int) -> tuple[str, set[str]]:
    """``local2 feedback`` in its own process; its stdout and every module it imported."""
    done = local2(
        "--config",
        str(config),
        "feedback",
        turn["session_id"],
        turn["query_id"],
        "-r",
        str(rating),
        env={"PYTHONPROFILEIMPORTTIME": "1"},  # -X importtime: one stderr line per import
        cold=True,  # a new interpreter, whose every import is logged
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "langgraph.graph" in imported  # the import log is there: its absences mean something
    return done.stdout, imported


def test_cli_feedback_imports_no_chroma_and_memory_applies_it_when_opened(tmp_path: Path) -> None:
    config = lexical_config(tmp_path)
    settings = load_settings(config)
    agent, weekdays, weekends = two_turns(settings)
    agent.close()  # memory closed, as when no app runs

    said, imported = rate(config, weekdays, 5)
    assert not {m for m in imported if m.split(".")[0] == "chromadb"}
    assert "local2.memory._store" not in imported
    assert f"Recorded rating 5 for {weekdays['query_id']}" in said
    assert "when it is next opened" in said
    rate(config, weekdays, 1)  # changed before memory opened: the newer rating wins
    rate(config, weekends, 5)
    assert deferred.queue_of(settings).waiting()

    listed = local2("--config", str(config), "memory", "list", "--json", env={})
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    turns = {r["query_id"]: r for r in rows if r["kind"] == "episodic"}
    assert turns[weekdays["query_id"]]["reward"] == 1.0 and turns[weekdays["query_id"]]["bad"]
    assert turns[weekends["query_id"]]["reward"] == 5.0
    assert not deferred.queue_of(settings).waiting()  # applied once, by that process

    store = EngramStore.open(settings)
    hits = store.recall(QUERY, k=2)
    assert [h["content"] for h in hits] == [turns[weekends["query_id"]]["content"]], (
        "the answer rated bad is left out of recall"
    )
    assert [h["reward"] for h in store.recall(QUERY, k=2, include_bad=True)] == [5.0, 1.0]
    store.close()


def test_the_next_open_applies_a_queued_rating(tmp_path: Path) -> None:
    config = lexical_config(tmp_path)
    settings = load_settings(config)
    agent, weekdays, _ = two_turns(settings)
    agent.close()
    rate(config, weekdays, 2)

    store = EngramStore.open(settings)
    assert not deferred.queue_of(settings).waiting()
    # Read past the store's own catch-up: the rating is in Chroma already.
    found = store.collection.get(where={"query_id": weekdays["query_id"]}, include=["metadatas"])
    assert [m["reward"] for m in found["metadatas"]] == [2.0]
    store.close()


def test_an_open_store_picks_up_a_rating_queued_by_another_process(tmp_path: Path) -> None:
    """A running app keeps memory open; `local2 feedback` rates in another process."""
    config = lexical_config(tmp_path)
    settings = load_settings(config)
    agent, weekdays, weekends = two_turns(settings)
    store = agent.services.memory
    assert {h["reward"] for h in store.recall(QUERY, k=2)} == {None}

    rate(config, weekdays, 1)
    hits = store.recall(QUERY, k=2)  # the next recall applies it first
    assert [h["content"] for h in hits] == [f"Q: {weekends['query']}\nA: Noted."]
    assert not deferred.queue_of(settings).waiting()
    agent.close()


def test_a_rating_of_a_deleted_turn_is_harmless(tmp_path: Path) -> None:
    config = lexical_config(tmp_path)
    settings = load_settings(config)
    agent, weekdays, weekends = two_turns(settings)
    store = agent.services.memory
    gone = next(e for e in store.list() if e.get("query_id") == weekdays["query_id"])
    assert store.delete(gone["id"])
    agent.close()
    rate(config, weekdays, 1)

    store = EngramStore.open(settings)
    assert not deferred.queue_of(settings).waiting()
    assert store.get(gone["id"]) is None
    turns = [e["query_id"] for e in store.list() if e["kind"] == "episodic"]
    assert turns == [weekends["query_id"]]
    store.close()


def test_feedback_on_a_data_dir_without_memory_writes_no_queue(tmp_path: Path) -> None:
    config = lexical_config(tmp_path)
    (config / "memory.yaml").write_text("enabled: false\n")
    settings = load_settings(config)
    model = ScriptedChatModel(replies=[reply("Noted.")], repeat_last=True)
    agent = Agent(settings, chat_model=model, tools=[], critic=None)
    turn = agent.turns.ask("Hello there.", "a")
    agent.close()
    said, _ = rate(config, turn, 4)
    assert "Recorded rating 4" in said and "(0 engram(s) annotated)" in said
    assert not deferred.queue_of(settings).waiting()
